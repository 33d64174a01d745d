// The misc op family: attention, recurrent networks, signal processing, training optimisers.
#include "ops/misc_internal.h"
#include "ops/ops.h"

namespace kiln {

void register_misc_ops(OpRegistry &r) {
  misc::register_attention_ops(r);
  misc::register_sdpa_ops(r);
  misc::register_rnn_ops(r);
  misc::register_signal_ops(r);
  misc::register_train_ops(r);
  misc::register_linear_attn_ops(r);
}

} // namespace kiln
