#include "async/frame_pool.hpp"

#include <new>

// Sanitizers need to see each frame's own allocation and free (use-after-free, leaks,
// races on a recycled frame), so pooling is off in those builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TOOLPORT_FRAME_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TOOLPORT_FRAME_POOL 0
#endif
#endif
#ifndef TOOLPORT_FRAME_POOL
#define TOOLPORT_FRAME_POOL 1
#endif

namespace toolport::detail {

namespace {
// Sized where the compiler offers it (clang before 17 only with -fsized-deallocation), so
// ASan can check that a frame comes back with the size it was allocated with.
void system_free(void* p, [[maybe_unused]] std::size_t size) noexcept {
#if defined(__cpp_sized_deallocation)
    ::operator delete(p, size);
#else
    ::operator delete(p);
#endif
}
}  // namespace

#if TOOLPORT_FRAME_POOL

namespace {

// Size classes of 64 bytes up to 4 KiB: a tools/call through every stage makes ~25 frames
// of 48 to 672 bytes (measured with pipeline_bench). Bigger ones go to the system.
constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 64;
constexpr std::size_t kMaxPooled = kGranule * kClasses;
// Bytes one thread keeps per size class: enough for a few hundred concurrent calls'
// frames of a kind, small enough that an idle thread holds little.
constexpr std::size_t kCacheBytesPerClass = 256 * 1024;

struct FreeBlock {
    FreeBlock* next;
};

struct FrameCache {
    FreeBlock* head[kClasses] = {};
    std::size_t count[kClasses] = {};

    ~FrameCache() {
        for (std::size_t c = 0; c < kClasses; ++c) {
            while (FreeBlock* b = head[c]) {
                head[c] = b->next;
                system_free(b, (c + 1) * kGranule);
            }
        }
        destroyed = true;
    }

    // Frames freed while the thread's statics are torn down (after this cache is gone)
    // go straight back to the system. Trivially destructible, so it outlives the cache.
    static thread_local bool destroyed;
};

thread_local bool FrameCache::destroyed = false;
thread_local FrameCache cache;

constexpr std::size_t size_class(std::size_t size) { return (size - 1) / kGranule; }

}  // namespace

void* frame_alloc(std::size_t size) {
    if (size == 0 || size > kMaxPooled) return ::operator new(size);
    const std::size_t c = size_class(size);
    if (FrameCache::destroyed) return ::operator new((c + 1) * kGranule);
    if (FreeBlock* b = cache.head[c]) {
        cache.head[c] = b->next;
        --cache.count[c];
        return b;
    }
    // Always the class size (also above), so any frame of this class can reuse the block
    // and frame_free can give it back with the size it was allocated with.
    return ::operator new((c + 1) * kGranule);
}

void frame_free(void* frame, std::size_t size) noexcept {
    if (!frame) return;
    if (size == 0 || size > kMaxPooled) {
        system_free(frame, size);
        return;
    }
    const std::size_t c = size_class(size);
    const std::size_t block = (c + 1) * kGranule;
    if (FrameCache::destroyed || cache.count[c] * block >= kCacheBytesPerClass) {
        system_free(frame, block);
        return;
    }
    auto* b = static_cast<FreeBlock*>(frame);
    b->next = cache.head[c];
    cache.head[c] = b;
    ++cache.count[c];
}

#else

void* frame_alloc(std::size_t size) { return ::operator new(size); }
void frame_free(void* frame, std::size_t size) noexcept { system_free(frame, size); }

#endif

}  // namespace toolport::detail
