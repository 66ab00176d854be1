/// Bytes waiting for stdout: a growable buffer that appends with one copy and keeps its memory
/// when emptied. `[UInt8]`'s `append(contentsOf:)` went through its generic range replacement,
/// about 130 instructions of code for every notification's line; this is a copy and a count.
///
/// Not copyable: the memory has one owner, freed with it; so it may move between threads
/// (unchecked: the compiler does not see that a unique owner shares nothing).
struct OutputBytes: ~Copyable, @unchecked Sendable {
    private var base: UnsafeMutablePointer<UInt8>? = nil
    /// The bytes held.
    private(set) var count = 0
    /// The bytes that fit before the memory must grow.
    private(set) var capacity = 0

    /// Empty, with no memory yet.
    init() {}

    deinit { base?.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// Adds `bytes` at the end, doubling the memory when they do not fit.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(to: max(capacity * 2, count + bytes.count, 256)) }
        guard let base else { return }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Empties the buffer; its memory stays for the next bytes.
    mutating func removeAll() { count = 0 }

    /// The bytes from `start` up to `end` (to the end unless given), lent to `body`.
    func withBytes<Result>(
        from start: Int = 0, upTo end: Int = .max, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        let to = min(max(end, 0), count)
        let from = min(max(start, 0), to)
        return body(UnsafeBufferPointer(start: base.map { $0 + from }, count: to - from))
    }

    private mutating func grow(to size: Int) {
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        if let base {
            moved.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = moved
        capacity = size
    }
}
