// Copyright (c) edge-outbox authors.
//
// outboxctl: the operator's command-line tool for an outbox store. See
// `outboxctl --help`; tools/ctl/ctl.cc holds everything but this.

#include <cstdio>
#include <string>
#include <vector>

#include "tools/ctl/ctl.h"

int main(int argc, char** argv) {
  return outbox::ctl::RunCtl(std::vector<std::string>(argv + 1, argv + argc),
                             stdout, stderr);
}
