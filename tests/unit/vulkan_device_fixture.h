// A gtest fixture that opens the first Vulkan device (the test skips without one) and checks
// at the end that the validation layer reported nothing; shared by the runtime and the
// kernel-IR run tests. KILN_TEST_DEVICE names another driver to open instead (ctest runs the
// kernel-IR run tests a second time with KILN_TEST_DEVICE=cpu).
#pragma once

#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace kiln_test {

class VulkanDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    size_t n = 0;
    const char *env = std::getenv("KILN_TEST_DEVICE");
    const std::string uri = env && *env ? env : "vulkan";
    kiln_status s = kiln_device_count(uri.c_str(), &n);
    if (s || n == 0) {
      std::string why = s ? kiln_status_message(s) : "no device";
      kiln_status_free(s);
      GTEST_SKIP() << uri << " unavailable: " << why;
    }
    kiln_status st = kiln_device_open(uri.c_str(), &device_);
    ASSERT_EQ(st, nullptr) << kiln_status_message(st);
    st = kiln_device_info_get(device_, &info_);
    ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  }
  void TearDown() override {
    if (!device_) return;
    uint64_t messages = 0;
    kiln_status st = kiln_device_validation_message_count(device_, &messages);
    EXPECT_EQ(st, nullptr) << kiln_status_message(st);
    kiln_status_free(st);
    EXPECT_EQ(messages, 0u) << "validation layer messages (see stderr)";
    kiln_device_release(device_);
  }
  kiln_device *device_ = nullptr;
  kiln_device_info info_{};
};

} // namespace kiln_test
