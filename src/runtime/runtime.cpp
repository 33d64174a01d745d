// runtime (placeholder)
