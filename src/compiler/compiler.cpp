// graph IR -> kernels -> artifact (placeholder)
