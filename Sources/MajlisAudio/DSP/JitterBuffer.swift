/// Reorders one speaker's packets by sequence number and releases one per 20 ms tick, a fixed
/// number of frames behind the newest, telling the decoder what to do for each slot: play the
/// packet, recover it from the next packet's FEC, or conceal it.
public struct JitterBuffer: Sendable {
    /// What to do for one playout slot.
    public enum Slot: Sendable, Equatable {
        case packet([UInt8])
        /// The packet is missing, but the next one is here: use its FEC.
        case recover(next: [UInt8])
        case conceal
        /// Nothing to play yet (still filling).
        case waiting
    }

    /// Frames held back before playout starts.
    public var targetFrames: Int
    private var packets: [UInt16: [UInt8]] = [:]
    private var next: UInt16?
    private var newest: UInt16?

    public init(targetFrames: Int = 3) { self.targetFrames = targetFrames }

    /// How many packets wait.
    public var depth: Int { packets.count }

    public mutating func insert(sequence: UInt16, payload: [UInt8]) {
        if let next, Int16(bitPattern: sequence &- next) < 0 { return }  // too late: already played
        packets[sequence] = payload
        if newest == nil || Int16(bitPattern: sequence &- newest!) > 0 { newest = sequence }
        if packets.count > 100, let next {  // far behind: drop what cannot be played in time
            for key in packets.keys where Int16(bitPattern: key &- next) < 0 { packets[key] = nil }
        }
    }

    /// The slot to play now.
    public mutating func pop() -> Slot {
        guard let newest else { return .waiting }
        if next == nil {
            guard packets.count >= targetFrames else { return .waiting }
            next = packets.keys.min { Int16(bitPattern: $0 &- $1) < 0 }
        }
        guard let current = next else { return .waiting }
        // Fell too far behind the newest (a burst arrived): skip ahead.
        if Int16(bitPattern: newest &- current) > Int16(targetFrames * 4) {
            next = newest &- UInt16(targetFrames)
            packets = packets.filter { Int16(bitPattern: $0.key &- next!) >= 0 }
            return pop()
        }
        defer { next = current &+ 1 }
        if let payload = packets.removeValue(forKey: current) { return .packet(payload) }
        if Int16(bitPattern: current &- newest) > 0 { return .conceal }  // ran dry
        if let following = packets[current &+ 1] { return .recover(next: following) }
        return .conceal
    }
}
