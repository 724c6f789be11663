// Every unit test runs with a state directory of its own: code that keeps state by default
// (the pins file of a Runtime built with the default pinning, the registry's kept entries)
// must never write into the state directory of whoever runs the tests.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace {

class StateHomeEnvironment final : public ::testing::Environment {
public:
    void SetUp() override {
        std::string dir = (std::filesystem::temp_directory_path() / "toolport-unit-state-XXXXXX").string();
        if (::mkdtemp(dir.data()) == nullptr) FAIL() << "cannot make a state directory for the tests";
        dir_ = dir;
        ::setenv("XDG_STATE_HOME", dir_.c_str(), 1);
    }
    void TearDown() override {
        std::error_code ec;
        if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    }

private:
    std::string dir_;
};

// Registered before main runs (gtest_main): gtest owns and deletes it.
[[maybe_unused]] ::testing::Environment* const state_home = ::testing::AddGlobalTestEnvironment(new StateHomeEnvironment);

}  // namespace
