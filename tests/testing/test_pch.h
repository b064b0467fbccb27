// Copyright (c) edge-outbox authors.
//
// The headers nearly every test source includes, precompiled once per
// build for all of them (outbox_test_pch, CMakeLists.txt). Only standard,
// Abseil and GoogleTest headers: a project header here would rebuild every
// test whenever it changed. Each test still includes what it uses.

#ifndef OUTBOX_TESTS_TESTING_TEST_PCH_H_
#define OUTBOX_TESTS_TESTING_TEST_PCH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#endif  // OUTBOX_TESTS_TESTING_TEST_PCH_H_
