// The artifact's content digest: a 40-byte trailer after the FlatBuffer holds the SHA-256 of
// every byte before it, then the tag "KLNSHA2\0". The compiler appends it (seal_artifact); the
// runtime checks it before it parses anything. SHA-256 rather than a short checksum so that
// the same value serves to pin a trusted artifact (`sha256sum` of the file without its last 40
// bytes gives it too). Header-only: shared by the compiler and the runtime without a link
// dependency (SHA-256 as specified in FIPS 180-4).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kiln::artifact {

using Digest = std::array<uint8_t, 32>;

inline constexpr size_t kTrailerBytes = 40;
inline constexpr char kTrailerTag[8] = {'K', 'L', 'N', 'S', 'H', 'A', '2', '\0'};

class Sha256 {
public:
  void update(const void *data, size_t n) {
    if (n == 0) return; // data may be null then, and memcpy's pointers must not be
    auto p = static_cast<const uint8_t *>(data);
    total_ += n;
    if (used_) {
      const size_t take = n < 64 - used_ ? n : 64 - used_;
      std::memcpy(block_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ < 64)
        return;
      compress(block_);
      used_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
      compress(p);
    std::memcpy(block_, p, n);
    used_ = n;
  }

  Digest finish() {
    const uint64_t bits = total_ * 8;
    const uint8_t one = 0x80, zero = 0;
    update(&one, 1);
    while (used_ != 56)
      update(&zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i)
      len[i] = uint8_t(bits >> (56 - 8 * i));
    update(len, 8);
    Digest out;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j)
        out[size_t(4 * i + j)] = uint8_t(h_[i] >> (24 - 8 * j));
    return out;
  }

private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const uint8_t *block) {
    static constexpr uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 |
             uint32_t(block[4 * i + 2]) << 8 | uint32_t(block[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6],
             h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                          k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
  }

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t block_[64] = {};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

inline Digest sha256(const void *data, size_t n) {
  Sha256 h;
  h.update(data, n);
  return h.finish();
}

// Lower-case hex, 64 characters.
inline std::string to_hex(const Digest &d) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// True when the last bytes of `data` are a trailer (its tag; the digest is not checked).
inline bool has_trailer(const void *data, size_t size) {
  return size >= kTrailerBytes &&
         std::memcmp(static_cast<const uint8_t *>(data) + size - 8, kTrailerTag, 8) == 0;
}

// Appends the trailer to a finished FlatBuffer.
inline void seal_artifact(std::vector<uint8_t> *bytes) {
  const Digest d = sha256(bytes->data(), bytes->size());
  bytes->insert(bytes->end(), d.begin(), d.end());
  bytes->insert(bytes->end(), kTrailerTag, kTrailerTag + 8);
}

} // namespace kiln::artifact
