// Copyright (c) edge-outbox authors.
//
// NbdSession: one client connection of outbox-lossy-disk, from the greeting
// to NBD_CMD_DISC, over a WriteCache. The protocol subset (enough for qemu's
// NBD client, qemu-io and qemu-system-*):
//   handshake  fixed newstyle, NBD_FLAG_NO_ZEROES honoured;
//   options    NBD_OPT_EXPORT_NAME, NBD_OPT_GO and NBD_OPT_INFO (answered
//              with NBD_INFO_EXPORT only), NBD_OPT_ABORT; every other option
//              (structured replies, meta contexts, TLS, list) is answered
//              NBD_REP_ERR_UNSUP, which qemu takes as "use simple replies";
//              any export name is accepted;
//   transmission  flags HAS_FLAGS, SEND_FLUSH, SEND_FUA, SEND_TRIM; simple
//              replies only; NBD_CMD_READ, NBD_CMD_WRITE (with
//              NBD_CMD_FLAG_FUA), NBD_CMD_FLUSH, NBD_CMD_TRIM (a no-op, see
//              WriteCache::Trim), NBD_CMD_DISC; any other command is
//              answered EINVAL.
// Requests are answered one at a time, in the order they came, so every
// write acknowledged before a FLUSH was in the cache when the flush ran.
// With a flush latency a FLUSH is held that long before it runs (a real
// cache takes milliseconds to write out): the session reads nothing more
// meanwhile, and a power cut before FinishFlush() finds the writes still
// unflushed.
// REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_NBD_SESSION_H_
#define OUTBOX_TESTS_VM_NBD_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/scoped_fd.h"
#include "tests/vm/write_cache.h"

namespace outbox::vm {

class NbdSession {
 public:
  // Sends the greeting on `socket`. `cache` must outlive the session.
  // Errors: WriteAll's (the client is gone).
  static absl::StatusOr<std::unique_ptr<NbdSession>> Start(
      ScopedFd socket, WriteCache* cache,
      absl::Duration flush_latency = absl::ZeroDuration());

  // The connection, to poll for the client's next message.
  int fd() const { return socket_.get(); }

  // Reads the client's next message (blocking until it is whole) and answers
  // it. Returns true while the session goes on, false once the client ended
  // it (NBD_CMD_DISC, NBD_OPT_ABORT). Errors: the connection is unusable
  // (kUnavailable: the client disconnected; kInvalidArgument: it broke the
  // protocol); close it.
  // REQUIRES: !flushing().
  absl::StatusOr<bool> Step();

  // A FLUSH is held (flush latency); it is due at flush_due().
  bool flushing() const { return flush_due_ != absl::InfiniteFuture(); }
  absl::Time flush_due() const { return flush_due_; }
  // Runs the held FLUSH and answers it. REQUIRES: flushing().
  // Errors: as Step's.
  absl::Status FinishFlush();

 private:
  enum class Phase { kClientFlags, kOptions, kTransmission };
  struct Request {
    uint16_t flags = 0;
    uint16_t type = 0;
    uint64_t handle = 0;
    uint64_t offset = 0;
    uint32_t length = 0;
    std::string payload;  // NBD_CMD_WRITE's data
  };

  NbdSession(ScopedFd socket, WriteCache* cache, absl::Duration flush_latency)
      : socket_(std::move(socket)),
        cache_(cache),
        flush_latency_(flush_latency) {}

  absl::StatusOr<bool> ReadClientFlags();
  absl::StatusOr<bool> HandleOption();
  absl::Status ExportName();
  absl::Status Go(uint32_t option, const std::string& data);
  absl::Status ReplyOption(uint32_t option, uint32_t type,
                           const std::string& data);
  absl::StatusOr<bool> HandleRequest();
  // Reads a request's header, and a write's payload.
  absl::Status ReadRequest(Request* request);
  // Carries out `request` on the cache; a read's data goes to `*data`.
  absl::Status Execute(const Request& request, std::string* data);
  // The NBD error value of a WriteCache status (0 for OK).
  static uint32_t ErrorValue(const absl::Status& status);
  absl::Status Reply(uint64_t handle, const absl::Status& status,
                     const std::string& data);
  absl::Status Send(const std::string& bytes);

  ScopedFd socket_;
  WriteCache* const cache_;
  const absl::Duration flush_latency_;
  Phase phase_ = Phase::kClientFlags;
  bool no_zeroes_ = false;
  absl::Time flush_due_ = absl::InfiniteFuture();
  uint64_t flush_handle_ = 0;
};

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_NBD_SESSION_H_
