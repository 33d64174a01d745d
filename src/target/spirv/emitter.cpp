// SPIR-V emitter (placeholder until the kernel IR lands)
