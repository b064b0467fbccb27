// Copyright (c) edge-outbox authors.
//
// The NBD protocol's numbers (the protocol document of the NetworkBlockDevice
// project, "fixed newstyle" negotiation with simple replies) and big-endian
// packing, for outbox-lossy-disk. Only what the server sends or accepts is
// here. Stateless; thread-safe.

#ifndef OUTBOX_TESTS_VM_NBD_WIRE_H_
#define OUTBOX_TESTS_VM_NBD_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace outbox::vm::nbd {

// Handshake.
inline constexpr uint64_t kMagic = 0x4e42444d41474943;        // "NBDMAGIC"
inline constexpr uint64_t kOptionMagic = 0x49484156454f5054;  // "IHAVEOPT"
inline constexpr uint64_t kReplyMagic = 0x0003e889045565a9;
inline constexpr uint16_t kFlagFixedNewstyle = 1 << 0;
inline constexpr uint16_t kFlagNoZeroes = 1 << 1;
inline constexpr uint32_t kClientFlagsKnown =
    kFlagFixedNewstyle | kFlagNoZeroes;

// Options.
inline constexpr uint32_t kOptExportName = 1;
inline constexpr uint32_t kOptAbort = 2;
inline constexpr uint32_t kOptInfo = 6;
inline constexpr uint32_t kOptGo = 7;
// Longest option data read; larger ones are refused and skipped.
inline constexpr uint32_t kMaxOptionLength = 64 * 1024;

// Option replies.
inline constexpr uint32_t kRepAck = 1;
inline constexpr uint32_t kRepInfo = 3;
inline constexpr uint32_t kRepErrUnsup = 0x80000001;
inline constexpr uint32_t kRepErrInvalid = 0x80000003;
inline constexpr uint16_t kInfoExport = 0;

// Transmission flags.
inline constexpr uint16_t kHasFlags = 1 << 0;
inline constexpr uint16_t kSendFlush = 1 << 2;
inline constexpr uint16_t kSendFua = 1 << 3;
inline constexpr uint16_t kSendTrim = 1 << 5;

// Requests and simple replies.
inline constexpr uint32_t kRequestMagic = 0x25609513;
inline constexpr uint32_t kSimpleReplyMagic = 0x67446698;
inline constexpr size_t kRequestSize = 28;
inline constexpr uint16_t kCmdRead = 0;
inline constexpr uint16_t kCmdWrite = 1;
inline constexpr uint16_t kCmdDisc = 2;
inline constexpr uint16_t kCmdFlush = 3;
inline constexpr uint16_t kCmdTrim = 4;
inline constexpr uint16_t kCmdFlagFua = 1 << 0;
// qemu's NBD client sends at most 32 MiB per request.
inline constexpr uint32_t kMaxPayload = 32 * 1024 * 1024;

// Error values of replies (errno numbers as NBD fixes them).
inline constexpr uint32_t kErrIo = 5;
inline constexpr uint32_t kErrInval = 22;
inline constexpr uint32_t kErrNoSpc = 28;

// Appends `value` in network byte order.
void Put16(std::string* out, uint16_t value);
void Put32(std::string* out, uint32_t value);
void Put64(std::string* out, uint64_t value);

// Reads a network-byte-order value at `p`.
uint16_t Get16(const char* p);
uint32_t Get32(const char* p);
uint64_t Get64(const char* p);

}  // namespace outbox::vm::nbd

#endif  // OUTBOX_TESTS_VM_NBD_WIRE_H_
