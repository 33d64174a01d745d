# Sourced by the H200 bench scripts, from the repository root: unpacks the carried .gl/ .debs
# (Debian's libvulkan1 and glvnd; NVIDIA's Vulkan ICD lives in libGLX_nvidia, which needs
# glvnd) and points the Vulkan loader at NVIDIA's ICD. With vulkan-validationlayers' .deb in .gl/
# too, KILN_VULKAN_VALIDATION=1 works there as here (bench/h200_conform.sh uses it).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi -L
