// Copyright (c) edge-outbox authors.
//
// outboxctl: the operator's command-line tool for an outbox store. See
// `outboxctl --help`; agent/ctl/ctl.cc holds everything but this.

#include <cstdio>
#include <string>
#include <vector>

#include "agent/ctl/ctl.h"

int main(int argc, char** argv) {
  return outbox::ctl::RunCtl(std::vector<std::string>(argv + 1, argv + argc),
                             stdout, stderr);
}
