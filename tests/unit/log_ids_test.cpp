// Log ids across coroutines (async/log_ids.hpp, async/task.hpp): a request's Task keeps its
// ids wherever it resumes, and never leaves them (or takes another's) on the thread when it
// suspends.
#include <gtest/gtest.h>

#include <vector>

#include "async/completion.hpp"
#include "async/log_ids.hpp"
#include "async/task.hpp"

using namespace toolport;

namespace {

LogIds ids_numbered(std::uint8_t n) {
    LogIds ids;
    ids.trace_id.fill(n);
    ids.span_id.fill(n);
    ids.set = true;
    return ids;
}

// The first byte of the current trace id, 0 when none is set.
int current() { return current_log_ids().set ? current_log_ids().trace_id[0] : 0; }

Task<int> leaf(Completion<int> wake, std::vector<int>& seen) {
    seen.push_back(current());
    int v = co_await wake;  // suspends: resumed later from plain code
    seen.push_back(current());
    co_return v;
}

Task<void> request(Completion<int> wake, std::vector<int>& seen) {
    seen.push_back(current());
    int v = co_await leaf(wake, seen);
    seen.push_back(current());
    seen.push_back(v);
}

}  // namespace

TEST(LogIds, ARequestsCoroutinesKeepItsIdsAcrossSuspensions) {
    Completion<int> wake_a, wake_b;
    std::vector<int> seen_a, seen_b;
    {
        LogIdsScope scope(ids_numbered(7));
        spawn(request(wake_a, seen_a), [](std::exception_ptr) {});
        EXPECT_EQ(current(), 7) << "the spawner's ids are its own again when the task suspends";
    }
    {
        LogIdsScope scope(ids_numbered(9));
        spawn(request(wake_b, seen_b), [](std::exception_ptr) {});
    }
    EXPECT_EQ(current(), 0);
    // Resumed from plain code with no ids (an I/O completion): each gets its own back, and
    // the thread has none once they are done.
    wake_a.set_value(1);
    EXPECT_EQ(current(), 0);
    wake_b.set_value(2);
    EXPECT_EQ(current(), 0);
    EXPECT_EQ(seen_a, (std::vector<int>{7, 7, 7, 7, 1}));
    EXPECT_EQ(seen_b, (std::vector<int>{9, 9, 9, 9, 2}));
}

TEST(LogIds, ACoroutineResumedFromInsideAnotherHandsItsIdsBack) {
    Completion<int> wake;
    std::vector<int> seen;
    {
        LogIdsScope scope(ids_numbered(3));
        spawn(request(wake, seen), [](std::exception_ptr) {});
    }
    // Another request's code resumes it (a completion fulfilled inline).
    LogIdsScope other(ids_numbered(5));
    wake.set_value(4);
    EXPECT_EQ(current(), 5) << "the resumer's ids are current again";
    EXPECT_EQ(seen, (std::vector<int>{3, 3, 3, 3, 4}));
}
