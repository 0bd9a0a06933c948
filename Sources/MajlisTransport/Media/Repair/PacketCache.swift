/// The last packets of one stream by sequence number, for answering NACKs: a fixed ring of
/// preallocated slots, so keeping a packet allocates nothing.
public struct PacketCache: Sendable {
    /// Packets kept (about 2.5 s of 20 ms frames).
    public static let capacity = 128
    /// The largest packet kept.
    public static let slotSize = 1_500

    private var storage: [UInt8]
    private var lengths: [Int]
    private var sequences: [UInt16]

    public init() {
        storage = [UInt8](repeating: 0, count: Self.capacity * Self.slotSize)
        lengths = [Int](repeating: 0, count: Self.capacity)
        sequences = [UInt16](repeating: 0, count: Self.capacity)
    }

    private static func slot(_ sequence: UInt16) -> Int { Int(sequence) % capacity }

    /// Keeps `packet` as `sequence` (replacing the one 128 packets older).
    public mutating func store(_ sequence: UInt16, _ packet: UnsafeRawBufferPointer) {
        guard packet.count <= Self.slotSize, let source = packet.baseAddress else { return }
        let slot = Self.slot(sequence)
        storage.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: slot * Self.slotSize).copyMemory(from: source, byteCount: packet.count) }
        lengths[slot] = packet.count
        sequences[slot] = sequence
    }

    public mutating func store(_ sequence: UInt16, _ packet: [UInt8]) {
        packet.withUnsafeBytes { store(sequence, $0) }
    }

    /// The packet kept as `sequence`, if it is still here.
    public func packet(_ sequence: UInt16) -> [UInt8]? {
        let slot = Self.slot(sequence)
        guard lengths[slot] > 0, sequences[slot] == sequence else { return nil }
        let start = slot * Self.slotSize
        return Array(storage[start..<start + lengths[slot]])
    }
}
