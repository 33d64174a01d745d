#!/usr/bin/env bash
# Installs the Debian 12 packages kiln needs (and any named as arguments), only those missing.
set -euo pipefail
pkgs=(cmake ninja-build g++ make libonnx-dev libprotobuf-dev protobuf-compiler libfmt-dev
      libcli11-dev nlohmann-json3-dev libgtest-dev llvm-14-tools python3 python3-onnx
      python3-numpy flatbuffers-compiler libflatbuffers-dev libvulkan-dev mesa-vulkan-drivers
      vulkan-tools vulkan-validationlayers spirv-tools spirv-headers glslang-tools
      python3-dev pybind11-dev python3-pybind11 python3-pytest pkgconf graphviz)
pkgs+=("$@") # extra packages a make target needs (make fuzz: clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
