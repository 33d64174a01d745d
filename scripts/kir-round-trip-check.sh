#!/usr/bin/env bash
# Compiles the bundled models (models/) and the real models (../shared/models) for every target
# preset, and a cross-section of the ONNX node tests for Vulkan, with KILN_CHECK_KIR_ROUND_TRIP=1:
# every kernel is printed after each kernel-IR stage, parsed back and printed again, and a
# difference is a compile error (used by ctest kir-round-trip). The conform-vulkan-* tests also
# run with the check on, so every kernel the conformance suites generate round-trips; the target
# presets here add the kernels only other devices get (tiled, split-K, workgroup rows).
#   kir-round-trip-check.sh KILN
# The node tests run through kiln conform on the first Vulkan device against the Vulkan
# expected-pass list, so a round-trip failure shows as a regression.
set -uo pipefail
kiln=$1
root=$(cd "$(dirname "$0")/.." && pwd)
export KILN_CHECK_KIR_ROUND_TRIP=1
status=0
for model in "$root"/models/*.onnx "$root"/../shared/models/*.onnx; do
  [ -f "$model" ] || continue
  for target in vulkan vulkan-lavapipe vulkan-nvidia; do
    out=$(mktemp)
    if ! "$kiln" compile "$model" -o "$out" --target "$target" >/dev/null; then
      echo "FAIL: $model ($target)"
      status=1
    fi
    rm -f "$out"
  done
done
dir=$("$root/scripts/onnx-node-suite.sh") || exit 1
list=$root/tests/conformance/vulkan.node.txt
case "$dir" in
  */build/onnx-node-generated) list="${list%.txt}-generated.txt" ;;
esac
# About 290 tests, one to a few of most op families: every lowering file builds kernels here.
filter='^test_(conv|gemm|matmul|reduce_(sum|max|log_sum_exp)_default|softmax_axis|layer_normalization_2d|lstm|gru|rnn|resize_(up|down)sample_scales_linear|gather|scatter_elements|averagepool_2d_(default|pads)|maxpool_2d_(default|pads)|cumsum|top_k|einsum|dft|nonmaxsuppression_center|attention_(3d|4d)$|cast_FLOAT_to|where|pad|slice$|transpose|concat_2d|split_equal|tile|expand|argmax_default|batchnorm|instancenorm|group_normalization|lrn|gridsample$|roialign|convtranspose$|deform_conv|qlinearmatmul|dequantizelinear$|quantizelinear$|range|onehot|tril|bitshift|mod_mixed|pow$|erf|clip$|hardmax|celu|elu$|gelu|mish|sce_mean_weight$|nllloss_NCd1_mean|rotary_embedding$|rms_normalization_2d|stft|unique|center_crop_pad_crop$)'
echo "kiln conform $dir --device vulkan --filter '$filter' --expect $list"
"$kiln" conform "$dir" --device vulkan --filter "$filter" --expect "$list" || status=1
exit $status
