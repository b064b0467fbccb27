// Copyright (c) edge-outbox authors.

#include "tests/vm/nbd_wire.h"

namespace outbox::vm::nbd {
namespace {

void PutBytes(std::string* out, uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

uint64_t GetBytes(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value = (value << 8) | static_cast<unsigned char>(p[i]);
  }
  return value;
}

}  // namespace

void Put16(std::string* out, uint16_t value) { PutBytes(out, value, 2); }
void Put32(std::string* out, uint32_t value) { PutBytes(out, value, 4); }
void Put64(std::string* out, uint64_t value) { PutBytes(out, value, 8); }

uint16_t Get16(const char* p) { return static_cast<uint16_t>(GetBytes(p, 2)); }
uint32_t Get32(const char* p) { return static_cast<uint32_t>(GetBytes(p, 4)); }
uint64_t Get64(const char* p) { return GetBytes(p, 8); }

}  // namespace outbox::vm::nbd
