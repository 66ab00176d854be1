import Foundation

/// Runs `body` on a thread of its own and waits for it without holding one of Swift's cooperative
/// threads (two on a 2-core machine): a test that computes for seconds there would stall every
/// async test beside it, and the timing tests among them would fail for it.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
