// Copyright (c) edge-outbox authors.
//
// The one source of outbox_test_pch, the target that builds the precompiled
// header test sources share (tests/testing/test_pch.h, CMakeLists.txt). Not
// a test: it is never run.

int main() { return 0; }
