// The replicas the overview lists. Alone, a replica lists itself. With shared sessions
// (replicas on one Redis) each one announces itself every few seconds through
// stores::SharedSessions::announce_replica, which also answers with every replica heard
// from recently: the roster keeps that answer, so the overview (read on any thread) never
// waits on Redis. While Redis is away the last answer stays, its ages growing.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stores/shared_sessions.hpp"

namespace toolport {
class Executor;
}

namespace toolport::console {

class ReplicaRoster : public std::enable_shared_from_this<ReplicaRoster> {
public:
    // `self`: this replica's id (host:pid); `info`: what it announces of itself (version,
    // transport, start time), a JSON object.
    ReplicaRoster(std::string self, nlohmann::json info);

    // Announces this replica through `shared` now and every `every` after, forgetting
    // replicas silent for three periods. Runs on `executor`'s loop until stop().
    void start(std::shared_ptr<stores::SharedSessions> shared, Executor& executor, std::chrono::milliseconds every);
    void stop();

    // The replicas seen, this one first: [{id, self, last_seen_s, ...info}].
    nlohmann::json json() const;

    // What an announcement answered (public for tests).
    void heard(std::vector<stores::ReplicaSeen> seen);

private:
    void announce();

    const std::string self_;
    const std::string info_text_;
    nlohmann::json self_info_;
    std::shared_ptr<stores::SharedSessions> shared_;
    Executor* executor_ = nullptr;
    std::chrono::milliseconds every_{0};
    bool stopped_ = false;
    std::function<void()> cancel_timer_;

    mutable std::mutex mutex_;
    std::vector<stores::ReplicaSeen> seen_;
    std::chrono::steady_clock::time_point heard_at_{};
};

}  // namespace toolport::console
