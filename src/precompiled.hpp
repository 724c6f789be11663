// The headers nearly every file of Toolport includes, compiled once per target instead of
// once per file (CMake's target_precompile_headers). nlohmann/json, fmt and spdlog cost
// 2-2.5 s of each file's compile under the sanitizers (measured on rest_catalog.cpp,
// search_contracts.cpp and registry.cpp: 9.7/5.1/4.4 s without, 7.2/3.1/2.5 s with), and
// CI builds the sources three times. A full sanitizer build with the unit tests took
// 626 s with it on a busy 2-core machine, against ~720 s without on an idle one. Only widely used, slow-to-parse headers belong here;
// every file still includes what it uses (the fuzz build, which has no precompiled
// header, checks that for the files it compiles).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
