// Copyright (c) edge-outbox authors.
//
// The one converter from MQTT 5 reason codes and libmosquitto error codes to
// absl::Status, in the codes the agent acts on: OK (delivered), kUnavailable
// (retry later; for a connection: unreachable, not an attempt),
// kInvalidArgument and kPermissionDenied (rejected for good: dead-letter),
// kFailedPrecondition (fix the TLS settings first).

#ifndef OUTBOX_PLATFORM_MQTT_STATUS_H_
#define OUTBOX_PLATFORM_MQTT_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

// A PUBACK's reason code (MQTT 5 §3.4.2.1):
//   0x00 Success, 0x10 No matching subscribers     -> OK (the broker took it;
//                                                      who subscribes is the
//                                                      fleet's business)
//   0x87 Not authorized                            -> kPermissionDenied
//   0x90 Topic Name invalid, 0x99 Payload format
//        invalid                                   -> kInvalidArgument
//   0x80 Unspecified error, 0x83 Implementation
//        specific error, 0x91 Packet Identifier in
//        use, 0x97 Quota exceeded, anything else   -> kUnavailable
// Unknown codes retry: the agent's attempt limit dead-letters them in the
// end, while a wrongly rejected event would be lost. The message names the
// code and its meaning, never the topic or payload.
absl::Status PubackStatus(int reason_code);

// A CONNACK's reason code: 0 -> OK; any refusal -> kUnavailable ("the broker
// refused the connection: <meaning> (0x86)"), with a hint for the usual
// causes (credentials, client id, authorization).
absl::Status ConnackStatus(int reason_code);

// A libmosquitto return code (MOSQ_ERR_*), `context` saying what was tried:
//   connection refused/lost, keepalive, lookup, errno,
//   protocol or malformed packets                  -> kUnavailable
//   TLS, TLS handshake                             -> kFailedPrecondition
//   invalid argument, payload size, UTF-8, QoS or
//   oversize packet                                -> kInvalidArgument
//   out of memory                                  -> kResourceExhausted
//   anything else                                  -> kInternal
// `errno_value` is read for MOSQ_ERR_ERRNO only.
absl::Status MosquittoStatus(int rc, absl::string_view context,
                             int errno_value = 0);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_MQTT_STATUS_H_
