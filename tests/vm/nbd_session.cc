// Copyright (c) edge-outbox authors.

#include "tests/vm/nbd_session.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "tests/vm/lossy_disk_os.h"
#include "tests/vm/nbd_wire.h"

namespace outbox::vm {
namespace {

constexpr uint16_t kTransmissionFlags =
    nbd::kHasFlags | nbd::kSendFlush | nbd::kSendFua | nbd::kSendTrim;

absl::Status ProtocolError(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("the client broke the NBD protocol: ", what));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NbdSession>> NbdSession::Start(
    ScopedFd socket, WriteCache* cache, absl::Duration flush_latency) {
  std::unique_ptr<NbdSession> session(
      new NbdSession(std::move(socket), cache, flush_latency));
  std::string greeting;
  nbd::Put64(&greeting, nbd::kMagic);
  nbd::Put64(&greeting, nbd::kOptionMagic);
  nbd::Put16(&greeting, nbd::kFlagFixedNewstyle | nbd::kFlagNoZeroes);
  absl::Status status = session->Send(greeting);
  if (!status.ok()) return status;
  return session;
}

absl::Status NbdSession::Send(const std::string& bytes) {
  return WriteAll(socket_.get(), bytes.data(), bytes.size());
}

absl::StatusOr<bool> NbdSession::Step() {
  switch (phase_) {
    case Phase::kClientFlags:
      return ReadClientFlags();
    case Phase::kOptions:
      return HandleOption();
    case Phase::kTransmission:
      return HandleRequest();
  }
  return false;
}

absl::StatusOr<bool> NbdSession::ReadClientFlags() {
  char raw[4];
  absl::Status status = ReadExactly(socket_.get(), raw, sizeof(raw));
  if (!status.ok()) return status;
  const uint32_t flags = nbd::Get32(raw);
  // The protocol says to drop a client that sets a flag we did not offer.
  if ((flags & ~nbd::kClientFlagsKnown) != 0) {
    return ProtocolError(absl::StrCat("unknown client flags ", flags));
  }
  no_zeroes_ = (flags & nbd::kFlagNoZeroes) != 0;
  phase_ = Phase::kOptions;
  return true;
}

absl::StatusOr<bool> NbdSession::HandleOption() {
  char header[16];
  absl::Status status = ReadExactly(socket_.get(), header, sizeof(header));
  if (!status.ok()) return status;
  if (nbd::Get64(header) != nbd::kOptionMagic) {
    return ProtocolError("bad option magic");
  }
  const uint32_t option = nbd::Get32(header + 8);
  const uint32_t length = nbd::Get32(header + 12);
  if (length > nbd::kMaxOptionLength) {
    return ProtocolError(absl::StrCat("option of ", length, " bytes"));
  }
  std::string data(length, '\0');
  status = ReadExactly(socket_.get(), data.data(), data.size());
  if (!status.ok()) return status;
  switch (option) {
    case nbd::kOptExportName:
      status = ExportName();
      break;
    case nbd::kOptGo:
    case nbd::kOptInfo:
      status = Go(option, data);
      break;
    case nbd::kOptAbort:
      status = ReplyOption(option, nbd::kRepAck, "");
      if (!status.ok()) return status;
      return false;
    default:
      status = ReplyOption(option, nbd::kRepErrUnsup, "");
  }
  if (!status.ok()) return status;
  return true;
}

absl::Status NbdSession::ExportName() {
  std::string reply;
  nbd::Put64(&reply, cache_->size());
  nbd::Put16(&reply, kTransmissionFlags);
  if (!no_zeroes_) reply.append(124, '\0');
  phase_ = Phase::kTransmission;
  return Send(reply);
}

absl::Status NbdSession::Go(uint32_t option, const std::string& data) {
  // Data: name length (32), name, number of info requests (16), requests
  // (16 each). Any name is this disk; NBD_INFO_EXPORT is always sent, and
  // the other info requests may be ignored.
  const uint64_t name_length = data.size() >= 4 ? nbd::Get32(data.data()) : 0;
  const uint64_t fixed = 4 + name_length + 2;
  if (data.size() < fixed ||
      data.size() != fixed + 2 * nbd::Get16(data.data() + fixed - 2)) {
    return ReplyOption(option, nbd::kRepErrInvalid, "malformed NBD_OPT_GO");
  }
  std::string info;
  nbd::Put16(&info, nbd::kInfoExport);
  nbd::Put64(&info, cache_->size());
  nbd::Put16(&info, kTransmissionFlags);
  absl::Status status = ReplyOption(option, nbd::kRepInfo, info);
  if (!status.ok()) return status;
  status = ReplyOption(option, nbd::kRepAck, "");
  if (status.ok() && option == nbd::kOptGo) phase_ = Phase::kTransmission;
  return status;
}

absl::Status NbdSession::ReplyOption(uint32_t option, uint32_t type,
                                     const std::string& data) {
  std::string reply;
  nbd::Put64(&reply, nbd::kReplyMagic);
  nbd::Put32(&reply, option);
  nbd::Put32(&reply, type);
  nbd::Put32(&reply, static_cast<uint32_t>(data.size()));
  reply += data;
  return Send(reply);
}

absl::StatusOr<bool> NbdSession::HandleRequest() {
  Request request;
  absl::Status status = ReadRequest(&request);
  if (!status.ok()) return status;
  if (request.type == nbd::kCmdDisc) return false;  // no reply
  if (request.type == nbd::kCmdFlush && flush_latency_ > absl::ZeroDuration()) {
    flush_handle_ = request.handle;
    flush_due_ = absl::Now() + flush_latency_;
    return true;  // FinishFlush answers it
  }
  std::string data;
  const absl::Status done = Execute(request, &data);
  status = Reply(request.handle, done, data);
  if (!status.ok()) return status;
  return true;
}

absl::Status NbdSession::FinishFlush() {
  flush_due_ = absl::InfiniteFuture();
  return Reply(flush_handle_, cache_->Flush(), "");
}

absl::Status NbdSession::ReadRequest(Request* request) {
  char header[nbd::kRequestSize];
  absl::Status status = ReadExactly(socket_.get(), header, sizeof(header));
  if (!status.ok()) return status;
  if (nbd::Get32(header) != nbd::kRequestMagic) {
    return ProtocolError("bad request magic");
  }
  request->flags = nbd::Get16(header + 4);
  request->type = nbd::Get16(header + 6);
  request->handle = nbd::Get64(header + 8);
  request->offset = nbd::Get64(header + 16);
  request->length = nbd::Get32(header + 24);
  if (request->type != nbd::kCmdWrite) return absl::OkStatus();
  // The payload follows whatever we answer: one we will not read leaves the
  // stream out of step, so the connection ends.
  if (request->length > nbd::kMaxPayload) {
    return ProtocolError(absl::StrCat("write of ", request->length, " bytes"));
  }
  request->payload.resize(request->length);
  return ReadExactly(socket_.get(), request->payload.data(),
                     request->payload.size());
}

absl::Status NbdSession::Execute(const Request& request, std::string* data) {
  switch (request.type) {
    case nbd::kCmdWrite:
      return cache_->Write(request.offset, request.payload,
                           (request.flags & nbd::kCmdFlagFua) != 0);
    case nbd::kCmdRead:
      if (request.length > nbd::kMaxPayload) {
        return absl::InvalidArgumentError(
            absl::StrCat("read of ", request.length, " bytes is too long"));
      }
      return cache_->Read(request.offset, request.length, data);
    case nbd::kCmdFlush:
      return cache_->Flush();
    case nbd::kCmdTrim:
      return cache_->Trim(request.offset, request.length);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown command ", request.type));
  }
}

uint32_t NbdSession::ErrorValue(const absl::Status& status) {
  if (status.ok()) return 0;
  if (absl::IsInvalidArgument(status)) return nbd::kErrInval;
  if (absl::IsResourceExhausted(status)) return nbd::kErrNoSpc;
  return nbd::kErrIo;
}

absl::Status NbdSession::Reply(uint64_t handle, const absl::Status& status,
                               const std::string& data) {
  const uint32_t error = ErrorValue(status);
  if (error != 0) {
    // The harness reads stderr when a guest reports an I/O error.
    std::fprintf(stderr, "outbox-lossy-disk: request failed: %s\n",
                 std::string(status.message()).c_str());
  }
  std::string reply;
  nbd::Put32(&reply, nbd::kSimpleReplyMagic);
  nbd::Put32(&reply, error);
  nbd::Put64(&reply, handle);
  // A failed read sends no data.
  if (error == 0) reply += data;
  return Send(reply);
}

}  // namespace outbox::vm
