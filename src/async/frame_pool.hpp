// Recycled memory for coroutine frames (Task<T> and spawn()'s detached frame).
//
// Why: a tools/call creates ~25 frames (the engine's handler, one or two per pipeline
// stage, the tool's handler, the store calls) and frees them all when it ends, each a
// malloc and a free. Frames are kept on a free list per size class in a thread-local
// cache and handed out again on the next call.
//
// A frame may be freed on another thread than the one that allocated it: it then goes to
// the freeing thread's cache (or back to the system when that cache is full), which is
// correct for any thread. Each cache holds a bounded number of bytes, so a thread that only
// frees cannot hoard memory. Under AddressSanitizer (or TSan/MSan) there is no pooling: every
// frame is a plain operator new/delete, so use-after-free of a frame is still reported.
#pragma once

#include <cstddef>

namespace toolport::detail {

// `size` is the frame size the compiler asks for; frame_free must get the same size back.
void* frame_alloc(std::size_t size);
void frame_free(void* frame, std::size_t size) noexcept;

// Mixed into a promise type: its coroutine frames come from the pool.
struct PooledFrame {
    static void* operator new(std::size_t size) { return frame_alloc(size); }
    static void operator delete(void* frame, std::size_t size) noexcept { frame_free(frame, size); }
};

}  // namespace toolport::detail
