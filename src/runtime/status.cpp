#include "runtime/status.h"

namespace kiln::rt {

const std::string &Status::message() const {
  static const std::string ok_message = "OK";
  return s_ ? s_->message : ok_message;
}

} // namespace kiln::rt

extern "C" {

kiln_status_code kiln_status_code_of(kiln_status status) { return status ? status->code : KILN_OK; }

const char *kiln_status_message(kiln_status status) {
  return status ? status->message.c_str() : "OK";
}

void kiln_status_free(kiln_status status) { delete status; }

const char *kiln_status_code_name(kiln_status_code code) {
  switch (code) {
  case KILN_OK: return "OK";
  case KILN_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case KILN_NOT_FOUND: return "NOT_FOUND";
  case KILN_INVALID_ARTIFACT: return "INVALID_ARTIFACT";
  case KILN_UNSUPPORTED: return "UNSUPPORTED";
  case KILN_UNAVAILABLE: return "UNAVAILABLE";
  case KILN_DEVICE_ERROR: return "DEVICE_ERROR";
  case KILN_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
  case KILN_INTERNAL: return "INTERNAL";
  case KILN_DEVICE_LOST: return "DEVICE_LOST";
  }
  return "UNKNOWN";
}

} // extern "C"
