/// The last `capacity` bytes of a persistent session's output (ssh/sessions.h): what an
/// attaching client is shown before live output. Older bytes are overwritten; the ring never
/// grows past its capacity, whatever the remote sends. Not thread-safe: its session guards it.
struct SessionRing {
    let capacity: Int
    private var storage: [UInt8]
    /// Where the next byte goes once the ring is full (the oldest byte's index).
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        storage = []
        storage.reserveCapacity(min(capacity, 64 * 1024))
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        // More than the ring holds: only its last `capacity` bytes can survive.
        let kept = bytes.count > capacity ? UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - capacity)...]) : bytes
        for b in kept {
            if storage.count < capacity {
                storage.append(b)
            } else {
                storage[head] = b
                head = head + 1 == capacity ? 0 : head + 1
            }
        }
        count = storage.count
    }

    /// The bytes held, oldest first.
    var contents: [UInt8] {
        guard storage.count == capacity, head > 0 else { return storage }
        return Array(storage[head...] + storage[..<head])
    }
}
