// Copyright (c) edge-outbox authors.
//
// Whether an output is a terminal, and how wide: outbox-demo rewrites one
// progress line in place on a terminal and prints plain lines otherwise.

#ifndef OUTBOX_PLATFORM_TERMINAL_H_
#define OUTBOX_PLATFORM_TERMINAL_H_

namespace outbox {

// True if `fd` is a terminal (isatty). Thread-safe.
bool IsTerminal(int fd);

// The terminal's width in columns, or 0 if `fd` is no terminal or does not
// say. Thread-safe.
int TerminalColumns(int fd);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_TERMINAL_H_
