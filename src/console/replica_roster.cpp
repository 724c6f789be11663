#include "console/replica_roster.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "async/task.hpp"

namespace toolport::console {

using Json = nlohmann::json;

ReplicaRoster::ReplicaRoster(std::string self, Json info)
    : self_(std::move(self)), info_text_(info.dump()), self_info_(std::move(info)) {}

void ReplicaRoster::start(std::shared_ptr<stores::SharedSessions> shared, Executor& executor,
                          std::chrono::milliseconds every) {
    shared_ = std::move(shared);
    executor_ = &executor;
    every_ = std::max(every, std::chrono::milliseconds(1));
    announce();
}

void ReplicaRoster::stop() {
    stopped_ = true;
    if (cancel_timer_) cancel_timer_();
    cancel_timer_ = nullptr;
}

void ReplicaRoster::announce() {
    if (stopped_ || !shared_) return;
    // The roster may be dropped while Redis answers: the weak pointer decides who is told.
    std::weak_ptr<ReplicaRoster> weak = weak_from_this();
    spawn(shared_->announce_replica(self_, info_text_, every_ * 3),
          [weak](std::optional<std::vector<stores::ReplicaSeen>> seen, std::exception_ptr error) {
              auto roster = weak.lock();
              if (!roster) return;
              if (error) {
                  try {
                      std::rethrow_exception(error);
                  } catch (const std::exception& e) {
                      spdlog::debug("console: replica not announced ({})", e.what());
                  }
              } else if (seen) {
                  roster->heard(std::move(*seen));
              }
              if (roster->stopped_) return;
              roster->cancel_timer_ = roster->executor_->schedule_after(roster->every_, [weak] {
                  if (auto again = weak.lock()) again->announce();
              });
          });
}

void ReplicaRoster::heard(std::vector<stores::ReplicaSeen> seen) {
    std::lock_guard lock(mutex_);
    seen_ = std::move(seen);
    heard_at_ = std::chrono::steady_clock::now();
}

Json ReplicaRoster::json() const {
    Json self = self_info_;
    self["id"] = self_;
    self["self"] = true;
    self["last_seen_s"] = 0;
    Json list = Json::array({std::move(self)});
    std::lock_guard lock(mutex_);
    const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                             heard_at_);
    for (const auto& r : seen_) {
        if (r.id == self_) continue;
        Json entry = Json::parse(r.info, nullptr, false);
        if (!entry.is_object()) entry = Json::object();
        entry["id"] = r.id;
        entry["self"] = false;
        entry["last_seen_s"] = (r.age_ms + since.count()) / 1000;
        list.push_back(std::move(entry));
    }
    return list;
}

}  // namespace toolport::console
