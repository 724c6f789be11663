#include "async/worker_pool.hpp"

#include <algorithm>
#include <system_error>
#include <thread>

#include <spdlog/spdlog.h>

namespace toolport {

// What the pool's threads share with it. It outlives the pool while a detached thread
// (stuck in abandoned work, or still busy at shutdown) holds it.
struct WorkerPool::Shared {
    std::mutex mutex;
    std::condition_variable wake;     // work queued, or stopping
    std::condition_variable retired;  // a thread ended
    std::deque<std::shared_ptr<Job>> jobs;
    std::size_t wanted = 0;      // threads free for new work that the pool keeps
    std::size_t max_spares = 0;  // threads beyond `wanted` at most
    std::size_t live = 0;
    std::size_t stuck = 0;  // running abandoned work
    bool stopping = false;
    bool closed = false;  // the pool is gone: results are dropped, not posted

    // With the lock held. False when the system has no thread to give.
    bool start_thread(const std::shared_ptr<Shared>& self) {
        ++live;
        try {
            std::thread([self] { self->work(); }).detach();
            return true;
        } catch (const std::system_error& e) {
            --live;
            spdlog::warn("worker pool: no thread could be started: {}", e.what());
            return false;
        }
    }

    void work() {
        std::unique_lock lock(mutex);
        for (;;) {
            wake.wait(lock, [this] { return stopping || !jobs.empty(); });
            if (jobs.empty()) break;  // stopping, and nothing left to do
            std::shared_ptr<Job> job = std::move(jobs.front());
            jobs.pop_front();
            job->state = Job::State::running;
            lock.unlock();
            std::function<void()> deliver = job->work();
            job->work = nullptr;  // what the work captured goes now, not with the caller's registration
            lock.lock();
            job->state = Job::State::finished;
            if (!closed) deliver();
            deliver = nullptr;
            if (job->abandoned) --stuck;
            // A spare that stood in for a stuck thread, no longer needed.
            if (live - stuck > wanted) break;
        }
        --live;
        retired.notify_all();
    }
};

WorkerPool::WorkerPool(std::size_t threads, std::size_t max_spares, std::chrono::milliseconds shutdown_grace)
    : size_(threads), shutdown_grace_(shutdown_grace), shared_(std::make_shared<Shared>()) {
    std::lock_guard lock(shared_->mutex);
    shared_->wanted = threads;
    shared_->max_spares = max_spares;
    for (std::size_t i = 0; i < threads; ++i) {
        if (!shared_->start_thread(shared_)) throw std::runtime_error("worker pool: cannot start its threads");
    }
}

WorkerPool::~WorkerPool() {
    std::unique_lock lock(shared_->mutex);
    shared_->stopping = true;
    shared_->wake.notify_all();
    // Queued work is done and busy threads finish, for a while; a thread stuck in work its
    // caller abandoned is not waited for at all.
    const bool drained = shared_->retired.wait_for(lock, shutdown_grace_,
                                                   [this] { return shared_->live == shared_->stuck; });
    if (!drained || shared_->stuck > 0) {
        spdlog::warn("worker pool: {} thread(s) still blocked at shutdown are left to end with the process",
                     shared_->live);
    }
    shared_->closed = true;
    shared_->jobs.clear();
}

std::size_t WorkerPool::live_threads() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->live;
}

std::size_t WorkerPool::stuck_threads() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->stuck;
}

void WorkerPool::submit(const std::shared_ptr<Job>& job) {
    {
        std::lock_guard lock(shared_->mutex);
        shared_->jobs.push_back(job);
    }
    shared_->wake.notify_one();
}

void WorkerPool::abandon(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Job>& job) {
    std::lock_guard lock(shared->mutex);
    if (job->abandoned || job->state == Job::State::finished) return;
    job->abandoned = true;
    if (job->state == Job::State::queued) {
        shared->jobs.erase(std::remove(shared->jobs.begin(), shared->jobs.end(), job), shared->jobs.end());
        return;
    }
    ++shared->stuck;
    // Keep `wanted` threads free for new work while this one is blocked, within bounds.
    if (!shared->stopping && shared->live - shared->stuck < shared->wanted &&
        shared->live < shared->wanted + shared->max_spares) {
        shared->start_thread(shared);
    }
}

}  // namespace toolport
