import CNetShim

#if canImport(Glibc)
import Glibc
#endif

/// Datagrams prepared in preallocated slots and sent with one system call (sendmmsg): the
/// media router's fan-out. Filling and sending allocate nothing. One thread at a time.
public final class UDPBatch {
    /// The largest datagram a slot holds.
    public static let slotSize = 1_600
    public let capacity: Int
    private var storage: [UInt8]
    private var lengths: [Int32]
    private var addresses: [sockaddr_in]
    /// Datagrams prepared so far.
    public private(set) var count = 0

    public init(capacity: Int) {
        self.capacity = capacity
        storage = [UInt8](repeating: 0, count: capacity * Self.slotSize)
        lengths = [Int32](repeating: 0, count: capacity)
        addresses = [sockaddr_in](repeating: sockaddr_in(), count: capacity)
    }

    /// Fills the next slot with `fill` (given the slot, it returns the datagram's length, or nil
    /// to leave it out) addressed to `address`. False when the batch is full.
    @discardableResult
    public func add(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) -> Bool {
        guard count < capacity else { return false }
        let start = count * Self.slotSize
        let length = storage.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<start + Self.slotSize])) }
        guard let length, length > 0, length <= Self.slotSize else { return true }
        lengths[count] = Int32(length)
        addresses[count] = address.sockaddr
        count += 1
        return true
    }

    /// Sends every prepared datagram from `socket` and empties the batch; returns how many left.
    @discardableResult
    public func send(from socket: UDPSocket) -> Int {
        guard count > 0 else { return 0 }
        let sent = storage.withUnsafeBytes { bytes in
            lengths.withUnsafeBufferPointer { sizes in
                addresses.withUnsafeBufferPointer { targets in
                    socket.withDescriptor { majlis_send_batch($0, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(Self.slotSize), sizes.baseAddress!, targets.baseAddress!, Int32(count)) }
                }
            }
        }
        count = 0
        return Int(max(0, sent))
    }
}
