#include "stores/redis_client.hpp"

#include <optional>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <spdlog/spdlog.h>

#include "async/control_signal.hpp"

#include "async/asio_executor.hpp"
#include "async/completion.hpp"

namespace toolport::stores {

namespace asio = boost::asio;

namespace {

// hiredis writes with write(2), so a server that has gone away raises SIGPIPE, whose
// default action ends the process. The signal is blocked on this thread around hiredis's
// writes, and one that the write raised is consumed before unblocking.
class SigpipeBlocked {
public:
    SigpipeBlocked() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
    }
    ~SigpipeBlocked() {
        if (!was_pending_) {
            timespec no_wait{0, 0};
            while (sigtimedwait(&pipe_, nullptr, &no_wait) == SIGPIPE) {}
        }
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

private:
    sigset_t pipe_;
    sigset_t previous_;
    bool was_pending_ = false;
};

RedisReply convert(const redisReply* r) {
    RedisReply out;
    switch (r->type) {
        case REDIS_REPLY_STRING:
            out.type = RedisReply::Type::string;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STATUS:
            out.type = RedisReply::Type::status;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = RedisReply::Type::error;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = RedisReply::Type::integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_NIL: out.type = RedisReply::Type::nil; break;
        case REDIS_REPLY_ARRAY:
            out.type = RedisReply::Type::array;
            out.elements.reserve(r->elements);
            for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
            break;
        default:
            out.type = RedisReply::Type::error;
            out.text = "ERR reply of a type this client does not know (" + std::to_string(r->type) + ")";
            break;
    }
    return out;
}

std::exception_ptr unavailable(std::string why) { return std::make_exception_ptr(RedisUnavailable(std::move(why))); }

// A command between redisAsyncCommandArgv and its reply callback (which owns and frees it).
struct Pending {
    Completion<RedisReply> done;
    Executor* executor = nullptr;
    std::function<void()> cancel_timeout;
};

// hiredis reply callback. Runs inside hiredis, so the waiting coroutine is resumed from a
// posted job instead: it may send commands or drop the connection, which hiredis does not
// allow from its own stack. A NULL reply means the context is being freed.
void on_reply(redisAsyncContext*, void* reply, void* privdata) {
    std::unique_ptr<Pending> pending(static_cast<Pending*>(privdata));
    if (pending->cancel_timeout) pending->cancel_timeout();
    auto done = pending->done;
    try {
        if (reply) {
            pending->executor->post([done, converted = convert(static_cast<redisReply*>(reply))]() mutable {
                done.set_value(std::move(converted));
            });
        } else {
            pending->executor->post(
                [done]() mutable { done.set_error(unavailable("the Redis connection closed before the reply")); });
        }
    } catch (...) {  // out of memory copying the reply: nothing may unwind through hiredis
        done.set_error(std::current_exception());
    }
}

// The Asio adapter hiredis drives: it calls addRead/addWrite when it wants to know that
// its socket is readable/writable (one event each: it asks again after handling one),
// delRead/delWrite when it no longer does, and cleanup when it frees the context.
class SocketWatcher : public std::enable_shared_from_this<SocketWatcher> {
public:
    SocketWatcher(asio::io_context& io, redisAsyncContext* context) : context_(context), socket_(io) {
        socket_.assign(context->c.fd);
    }

    // Called once, from the cleanup hook, with hiredis's reason for closing.
    std::function<void(std::string)> on_closed;

    void attach() {
        context_->ev.data = this;
        context_->ev.addRead = [](void* self) { static_cast<SocketWatcher*>(self)->watch(Direction::read); };
        context_->ev.delRead = [](void* self) { static_cast<SocketWatcher*>(self)->want(Direction::read) = false; };
        context_->ev.addWrite = [](void* self) { static_cast<SocketWatcher*>(self)->watch(Direction::write); };
        context_->ev.delWrite = [](void* self) { static_cast<SocketWatcher*>(self)->want(Direction::write) = false; };
        context_->ev.cleanup = [](void* self) { static_cast<SocketWatcher*>(self)->context_freed(); };
    }

private:
    enum class Direction { read, write };
    struct Interest {
        bool wanted = false;   // hiredis asked for the next event
        bool waiting = false;  // an async_wait is outstanding
    };

    bool& want(Direction d) { return (d == Direction::read ? read_ : write_).wanted; }

    void watch(Direction d) {
        Interest& interest = d == Direction::read ? read_ : write_;
        interest.wanted = true;
        if (interest.waiting) return;  // the outstanding wait will deliver it
        interest.waiting = true;
        socket_.async_wait(d == Direction::read ? asio::posix::descriptor_base::wait_read
                                                : asio::posix::descriptor_base::wait_write,
                           [self = shared_from_this(), d](const boost::system::error_code& ec) { self->fired(d, ec); });
    }

    void fired(Direction d, const boost::system::error_code& ec) {
        Interest& interest = d == Direction::read ? read_ : write_;
        interest.waiting = false;
        // Aborted: the context was freed (release() below). Any other error is hiredis's to
        // find when it reads or writes the socket.
        if (ec == asio::error::operation_aborted || !context_ || !interest.wanted) return;
        interest.wanted = false;
        if (d == Direction::read) {
            redisAsyncHandleRead(context_);
        } else {
            SigpipeBlocked blocked;
            redisAsyncHandleWrite(context_);
        }
    }

    // hiredis is freeing the context (and will close the socket itself).
    void context_freed() {
        std::string reason = context_->err ? std::string(context_->errstr) : "connection closed";
        context_ = nullptr;
        boost::system::error_code ignored;
        socket_.cancel(ignored);
        socket_.release();
        auto notify = std::move(on_closed);
        if (notify) notify(std::move(reason));  // may destroy *this (a pending wait keeps it alive)
    }

    redisAsyncContext* context_;
    asio::posix::stream_descriptor socket_;
    Interest read_;
    Interest write_;
};

}  // namespace

struct RedisClient::Impl : std::enable_shared_from_this<RedisClient::Impl> {
    enum class Phase { down, connecting, handshaking, ready };

    Impl(AsioExecutor& executor, Options options)
        : executor(executor), options(std::move(options)), resolver(executor.io()) {}

    AsioExecutor& executor;
    const Options options;
    asio::ip::tcp::resolver resolver;

    redisAsyncContext* context = nullptr;
    std::shared_ptr<SocketWatcher> watcher;
    Phase phase = Phase::down;
    std::uint64_t attempt = 0;  // tells a stale timer or callback from the current attempt
    std::uint64_t connections = 0;
    bool stopping = false;
    bool down_reported = false;
    std::string drop_reason;
    std::function<void()> cancel_reconnect;
    std::function<void()> cancel_connect_deadline;
    // Subscriber mode: resolved by Redis's confirmation of the last channel subscribed.
    std::optional<Completion<RedisReply>> subscribed;
    std::size_t confirmations = 0;

    // hiredis calls this for the SUBSCRIBE's confirmations and then for every message, with
    // the Impl as privdata (it outlives the context: shutdown() and drop() free the context
    // while the Impl is alive); a NULL reply when the context is being freed.
    static void on_subscription(redisAsyncContext*, void* reply, void* privdata) {
        if (!reply) return;
        auto* self = static_cast<Impl*>(privdata);
        try {
            RedisReply r = convert(static_cast<redisReply*>(reply));
            self->executor.post([weak = self->weak_from_this(), r = std::move(r)]() mutable {
                if (auto s = weak.lock()) s->subscription_reply(std::move(r));
            });
        } catch (...) {  // out of memory copying the message: nothing may unwind through hiredis
        }
    }

    void subscription_reply(RedisReply r) {
        if (!r.is_array() || r.elements.empty()) return;
        const auto& kind = r.elements[0].text;
        if (kind == "subscribe") {
            if (++confirmations == options.subscribe.size() && subscribed && !subscribed->done()) {
                subscribed->set_value(std::move(r));
            }
        } else if (kind == "message" && r.elements.size() >= 3 && options.on_message) {
            options.on_message(std::move(r.elements[1].text), std::move(r.elements[2].text));
        }
    }

    // SUBSCRIBE with the persistent callback (no command timeout: it stays open).
    Completion<RedisReply> start_subscriptions() {
        Completion<RedisReply> done;
        subscribed = done;
        confirmations = 0;
        std::vector<std::string> args{"SUBSCRIBE"};
        args.insert(args.end(), options.subscribe.begin(), options.subscribe.end());
        std::vector<const char*> argv;
        std::vector<std::size_t> lengths;
        for (const auto& arg : args) {
            argv.push_back(arg.data());
            lengths.push_back(arg.size());
        }
        if (!context || redisAsyncCommandArgv(context, &Impl::on_subscription, this, static_cast<int>(argv.size()),
                                              argv.data(), lengths.data()) != REDIS_OK) {
            done.set_error(unavailable("the Redis connection is closing"));
            return done;
        }
        // Bounded like a command: a confirmation that never comes drops the connection.
        executor.schedule_after(options.command_timeout,
                                [weak = weak_from_this(), this_attempt = attempt, done]() mutable {
                                    if (done.done()) return;
                                    done.set_error(unavailable("Redis did not confirm the subscription in time"));
                                    if (auto self = weak.lock()) self->command_timed_out(this_attempt);
                                });
        return done;
    }

    void connect() {
        cancel_reconnect = nullptr;
        if (stopping || phase != Phase::down) return;
        phase = Phase::connecting;
        const auto this_attempt = ++attempt;
        cancel_connect_deadline = executor.schedule_after(options.command_timeout,
                                                          [weak = weak_from_this(), this_attempt] {
                                                              if (auto self = weak.lock())
                                                                  self->connect_timed_out(this_attempt);
                                                          });

        boost::system::error_code not_an_address;
        auto address = asio::ip::make_address(options.endpoint.host, not_an_address);
        if (!not_an_address) {
            open(address.to_string());
            return;
        }
        // hiredis would resolve the name with a blocking getaddrinfo on the loop thread.
        resolver.async_resolve(options.endpoint.host, std::to_string(options.endpoint.port),
                               [weak = weak_from_this(), this_attempt](const boost::system::error_code& ec,
                                                                       asio::ip::tcp::resolver::results_type results) {
                                   auto self = weak.lock();
                                   if (!self || self->attempt != this_attempt || self->phase != Phase::connecting ||
                                       self->context)
                                       return;
                                   if (ec || results.empty()) {
                                       self->attempt_failed("cannot resolve the host: " +
                                                            (ec ? ec.message() : "no address"));
                                       return;
                                   }
                                   // IPv4 first: "localhost" often lists ::1 first, while Redis commonly binds 127.0.0.1.
                                   auto chosen = results.begin()->endpoint().address();
                                   for (const auto& entry : results) {
                                       if (entry.endpoint().address().is_v4()) {
                                           chosen = entry.endpoint().address();
                                           break;
                                       }
                                   }
                                   self->open(chosen.to_string());
                               });
    }

    void open(const std::string& address) {
        redisAsyncContext* ac = redisAsyncConnect(address.c_str(), options.endpoint.port);
        if (!ac) {
            attempt_failed("out of memory");
            return;
        }
        if (ac->err) {
            std::string why = ac->errstr;
            redisAsyncFree(ac);
            attempt_failed(why);
            return;
        }
        std::shared_ptr<SocketWatcher> w;
        try {
            w = std::make_shared<SocketWatcher>(executor.io(), ac);
        } catch (const std::exception& e) {
            redisAsyncFree(ac);
            attempt_failed(std::string("cannot watch the socket: ") + e.what());
            return;
        }
        context = ac;
        watcher = w;
        ac->data = this;
        w->on_closed = [this](std::string reason) { context_gone(std::move(reason)); };
        w->attach();
        // Arms the first write event, which is how hiredis learns the connect finished.
        redisAsyncSetConnectCallback(ac, [](const redisAsyncContext* c, int status) {
            // On failure hiredis frees the context right after; the cleanup hook reports it.
            if (status == REDIS_OK) static_cast<Impl*>(c->data)->connected();
        });
    }

    // TCP is up (called from inside hiredis: the handshake starts from a posted job).
    void connected();

    // AUTH and SELECT from the URL, then PING: ready only once Redis has answered.
    static Task<void> handshake(std::shared_ptr<Impl> self);

    // Queues one command on the connection; the completion resolves (from a posted job)
    // with its reply, or RedisUnavailable.
    Completion<RedisReply> enqueue(const std::vector<std::string>& args) {
        Completion<RedisReply> done;
        if (!context) {
            done.set_error(unavailable("Redis is not connected"));
            return done;
        }
        std::vector<const char*> argv;
        std::vector<std::size_t> lengths;
        argv.reserve(args.size());
        lengths.reserve(args.size());
        for (const auto& arg : args) {
            argv.push_back(arg.data());
            lengths.push_back(arg.size());
        }
        auto pending = std::make_unique<Pending>(Pending{done, &executor, {}});
        if (redisAsyncCommandArgv(context, &on_reply, pending.get(), static_cast<int>(argv.size()), argv.data(),
                                  lengths.data()) != REDIS_OK) {
            done.set_error(unavailable("the Redis connection is closing"));
            return done;
        }
        Pending* queued = pending.release();  // owned by on_reply from now on
        queued->cancel_timeout =
            executor.schedule_after(options.command_timeout, [done, weak = weak_from_this(), this_attempt = attempt,
                                                              timeout = options.command_timeout]() mutable {
                // Posted first, so it wins over the "connection closed" that dropping posts.
                auto self = weak.lock();
                if (self)
                    self->executor.post([done, timeout]() mutable {
                        done.set_error(
                            unavailable("no reply from Redis within " + std::to_string(timeout.count()) + " ms"));
                    });
                else done.set_error(unavailable("the Redis client was destroyed"));
                if (self) self->command_timed_out(this_attempt);
            });
        return done;
    }

    // A reply slower than the timeout counts as Redis being away: the connection is
    // dropped (failing what is queued on it) and re-established, so a hung server cannot
    // pile up commands.
    void command_timed_out(std::uint64_t of_attempt) {
        if (stopping || of_attempt != attempt || !context) return;
        drop("no reply within " + std::to_string(options.command_timeout.count()) + " ms");
    }

    void connect_timed_out(std::uint64_t of_attempt) {
        if (stopping || of_attempt != attempt || phase != Phase::connecting) return;
        const std::string why = "connecting took longer than " + std::to_string(options.command_timeout.count()) + " ms";
        if (context) {
            drop(why);
        } else {
            resolver.cancel();
            attempt_failed(why);
        }
    }

    // Never called from inside hiredis (only from timers and posted jobs): freeing the
    // context runs the pending callbacks and then the cleanup hook, which lands in
    // context_gone().
    void drop(const std::string& reason) {
        if (!context) return;
        drop_reason = reason;
        redisAsyncFree(context);
    }

    void context_gone(std::string reason) {
        if (!drop_reason.empty()) reason = std::exchange(drop_reason, {});
        const bool was_ready = phase == Phase::ready;
        context = nullptr;
        watcher.reset();
        phase = Phase::down;
        if (cancel_connect_deadline) std::exchange(cancel_connect_deadline, nullptr)();
        if (stopping) return;
        report_down(reason, was_ready);
        schedule_reconnect();
    }

    void attempt_failed(const std::string& reason) {
        phase = Phase::down;
        if (cancel_connect_deadline) std::exchange(cancel_connect_deadline, nullptr)();
        if (stopping) return;
        report_down(reason, false);
        schedule_reconnect();
    }

    // Once per outage at warning level; the retries after it at debug level.
    void report_down(const std::string& reason, bool was_ready) {
        const auto where = options.endpoint.describe();
        const auto every = options.reconnect_interval.count();
        if (was_ready) {
            spdlog::warn("Redis {} connection lost ({}); stores use their fallbacks, reconnecting every {} ms", where,
                         reason, every);
        } else if (!down_reported) {
            spdlog::warn("Redis {} unreachable ({}); stores use their fallbacks, retrying every {} ms", where, reason,
                         every);
        } else {
            spdlog::debug("Redis {} still unreachable ({})", where, reason);
        }
        down_reported = true;
    }

    void schedule_reconnect() {
        cancel_reconnect = executor.schedule_after(options.reconnect_interval, [weak = weak_from_this()] {
            if (auto self = weak.lock()) self->connect();
        });
    }

    void shutdown() {
        stopping = true;
        if (cancel_reconnect) std::exchange(cancel_reconnect, nullptr)();
        if (cancel_connect_deadline) std::exchange(cancel_connect_deadline, nullptr)();
        resolver.cancel();
        if (context) redisAsyncFree(context);  // pending commands fail; the cleanup hook clears `context`
    }
};

// connected() and handshake() are defined out of the class: clang 14 cannot build a
// coroutine with inline (COMDAT) linkage under -fsanitize=function ("Cannot represent a
// difference across sections"); both create one (spawn's frame, the handshake).
void RedisClient::Impl::connected() {
    phase = Phase::handshaking;
    if (cancel_connect_deadline) std::exchange(cancel_connect_deadline, nullptr)();
    executor.post([weak = weak_from_this(), this_attempt = attempt] {
        auto self = weak.lock();
        if (!self || self->stopping || self->attempt != this_attempt || self->phase != Phase::handshaking) return;
        spawn(handshake(self), [weak, this_attempt](std::exception_ptr error) {
            auto self = weak.lock();
            if (!self || self->stopping || self->attempt != this_attempt || self->phase != Phase::handshaking) return;
            if (error) {
                try {
                    std::rethrow_exception(error);
                } catch (const std::exception& e) {
                    self->drop(e.what());
                } catch (const ControlSignal& e) {
                    self->drop(e.what());
                }
                return;
            }
            self->phase = Phase::ready;
            ++self->connections;
            self->down_reported = false;
            spdlog::info("Redis {} connected", self->options.endpoint.describe());
        });
    });
}

Task<void> RedisClient::Impl::handshake(std::shared_ptr<Impl> self) {
    const RedisEndpoint& endpoint = self->options.endpoint;
    if (!endpoint.password.empty()) {
        std::vector<std::string> auth{"AUTH"};
        if (!endpoint.username.empty()) auth.push_back(endpoint.username);
        auth.push_back(endpoint.password);
        RedisReply reply = co_await self->enqueue(auth);
        if (reply.is_error()) throw RedisUnavailable("AUTH refused: " + reply.text);
    }
    if (endpoint.db != 0) {
        std::vector<std::string> select{"SELECT", std::to_string(endpoint.db)};
        RedisReply reply = co_await self->enqueue(select);
        if (reply.is_error())
            throw RedisUnavailable("SELECT " + std::to_string(endpoint.db) + " refused: " + reply.text);
    }
    std::vector<std::string> ping{"PING"};
    RedisReply reply = co_await self->enqueue(ping);
    if (reply.is_error()) throw RedisUnavailable("PING refused: " + reply.text);
    if (!self->options.subscribe.empty()) co_await self->start_subscriptions();
}

RedisClient::RedisClient(AsioExecutor& executor, Options options)
    : impl_(std::make_shared<Impl>(executor, std::move(options))) {}

RedisClient::~RedisClient() { impl_->shutdown(); }

void RedisClient::start() { impl_->connect(); }

bool RedisClient::ready() const { return impl_->phase == Impl::Phase::ready; }

std::uint64_t RedisClient::connections() const { return impl_->connections; }

const RedisClient::Options& RedisClient::options() const { return impl_->options; }

Task<RedisReply> RedisClient::command(std::vector<std::string> args) {
    if (!ready()) throw RedisUnavailable("Redis is not connected");
    // Nothing of `this` is touched after the co_await: the reply may come after the client is gone.
    auto done = impl_->enqueue(args);
    co_return co_await done;
}

}  // namespace toolport::stores
