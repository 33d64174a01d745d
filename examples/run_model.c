/* Runs a compiled kiln artifact with the C API only.
 *
 *   kiln_run_example MODEL.kiln [DEVICE]
 *
 * DEVICE defaults to "vulkan" ("null" works anywhere). Every input is filled with 0, 1, 2, ...
 * (converted to its dtype where simple, zero bytes otherwise), the model runs once, and the
 * first values of every f32 output are printed along with per-command device times. */
#include <kiln/kiln.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(kiln_status status, const char *what) {
  fprintf(stderr, "%s: %s (%s)\n", what, kiln_status_message(status),
          kiln_status_code_name(kiln_status_code_of(status)));
  kiln_status_free(status);
  return 1;
}

static void fill_input(const kiln_tensor_info *info, void *data) {
  size_t count = info->bytes / kiln_dtype_size(info->dtype);
  memset(data, 0, info->bytes);
  for (size_t i = 0; i < count; ++i) {
    if (info->dtype == KILN_F32)
      ((float *)data)[i] = (float)i;
    else if (info->dtype == KILN_I32)
      ((int32_t *)data)[i] = (int32_t)i;
    else if (info->dtype == KILN_I64)
      ((int64_t *)data)[i] = (int64_t)i;
  }
}

/* Builds a caller-owned tensor for signature `info`; free(t->data) releases it. */
static int make_tensor(const kiln_tensor_info *info, kiln_tensor *t) {
  t->dtype = info->dtype;
  t->rank = info->rank;
  t->shape = info->shape;
  t->bytes = info->bytes;
  t->data = malloc(info->bytes ? info->bytes : 1);
  return t->data != NULL;
}

static void print_output(const kiln_tensor_info *info, const kiln_tensor *t) {
  printf("output '%s' %s[", info->name, kiln_dtype_name(info->dtype));
  for (uint32_t d = 0; d < info->rank; ++d)
    printf("%s%lld", d ? "," : "", (long long)info->shape[d]);
  printf("]");
  if (info->dtype == KILN_F32) {
    size_t count = info->bytes / 4;
    for (size_t i = 0; i < count && i < 8; ++i)
      printf(" %g", ((const float *)t->data)[i]);
    if (count > 8)
      printf(" ...");
  }
  printf("\n");
}

static int run(kiln_module *module) {
  size_t n_in = kiln_module_input_count(module), n_out = kiln_module_output_count(module);
  size_t n_cmd = kiln_module_command_count(module);
  kiln_tensor *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out + 1, sizeof *outs);
  uint64_t *ns = calloc(n_cmd + 1, sizeof *ns);
  kiln_tensor_info info;
  kiln_status s = NULL;
  int rc = 1;
  for (size_t i = 0; i < n_in && !s; ++i)
    if (!(s = kiln_module_input_info(module, i, &info)) && make_tensor(&info, &ins[i]))
      fill_input(&info, ins[i].data);
  for (size_t i = 0; i < n_out && !s; ++i)
    if (!(s = kiln_module_output_info(module, i, &info)))
      make_tensor(&info, &outs[i]);
  if (!s) {
    kiln_run_options options = {ns, n_cmd};
    s = kiln_module_run_with_options(module, ins, n_in, outs, n_out, &options);
  }
  if (s) {
    fail(s, "run");
  } else {
    for (size_t i = 0; i < n_out; ++i)
      if (!kiln_module_output_info(module, i, &info))
        print_output(&info, &outs[i]);
    for (size_t i = 0; i < n_cmd; ++i) {
      kiln_command_info ci;
      if (!kiln_module_command_info(module, i, &ci))
        printf("command %zu %-24s %10llu ns\n", i, ci.name, (unsigned long long)ns[i]);
    }
    rc = 0;
  }
  for (size_t i = 0; i < n_in; ++i)
    free(ins[i].data);
  for (size_t i = 0; i < n_out; ++i)
    free(outs[i].data);
  free(ins);
  free(outs);
  free(ns);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.kiln [DEVICE]\n", argv[0]);
    return 2;
  }
  kiln_device *device = NULL;
  kiln_module *module = NULL;
  kiln_status s = kiln_device_open(argc > 2 ? argv[2] : "vulkan", &device);
  if (s)
    return fail(s, "open device");
  s = kiln_module_load_file(device, argv[1], &module);
  kiln_device_release(device); /* the module keeps the device alive */
  if (s)
    return fail(s, "load");
  int rc = run(module);
  kiln_module_release(module);
  return rc;
}
