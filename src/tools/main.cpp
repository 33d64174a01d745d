#include "support/limits.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

int main(int argc, char **argv) {
  if (kiln::Status st = kiln::load_limits_from_env(); !st) {
    fmt::print(stderr, "error: {}\n", st.message());
    return 1;
  }
  CLI::App app{"kiln: an ML compiler for Vulkan"};
  app.require_subcommand(1);
  kiln::tools::add_run_command(app);
  kiln::tools::add_conform_command(app);
  kiln::tools::add_opt_command(app);
  kiln::tools::add_compile_commands(app);
  kiln::tools::add_bench_command(app);
  kiln::tools::add_quantize_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  return 0;
}
