"""kiln: compile ML models ahead of time and run them on Vulkan or the CPU.

    import kiln, numpy as np
    artifact = kiln.compile("model.onnx", target="cpu")     # bytes (or output="m.kiln")
    module = kiln.load(artifact, device="cpu")              # or "vulkan", "vulkan:1"
    outputs = module.run({"input": x})                      # {name: numpy array}
    outputs = module(input=x)                               # the same
    reference = kiln.load("model.onnx", device="cpu-ref")   # the reference executor
    mixed = kiln.compile("model.onnx", target="cpu", precision="auto", max_error=0.01,
                         inputs={"input": x})               # fp16, nodes over budget kept f32
    kiln.quantize("model.onnx", "model.q.onnx", calibrate="calib/")  # QDQ ONNX (static)

module.inputs / module.outputs list each tensor's name, shape and dtype; kiln.devices() lists
the devices and kiln.targets() the compile targets. Every failure raises kiln.Error (a
RuntimeError) with kiln's message; e.code is the runtime's status code name, or None. A bad
keyword value of precision='auto' or quantize raises ValueError (TypeError for a wrong type)
naming the argument.

Arrays are used in place where they are C-contiguous, aligned and of the input's dtype (a
wrong dtype is an error, not a conversion); outputs are fresh arrays the device writes into.
"""
from ._kiln import (Error, Module, TensorInfo, __version__, compile, devices, load, quantize,
                    targets)

__all__ = ["Error", "Module", "TensorInfo", "compile", "devices", "load", "quantize", "targets",
           "__version__"]
