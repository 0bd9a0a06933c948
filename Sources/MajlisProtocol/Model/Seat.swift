/// One seat of a room as clients see it.
public struct Seat: Sendable, Codable, Equatable {
    /// Position, 0 ..< seatCount.
    public var index: Int
    /// Empty, occupied or locked. A locked seat is never occupied.
    public var state: SeatState
    /// Who sits here, when occupied.
    public var user: String?
    /// Host mute ("ban mic"): whoever sits here may not be heard. Stays with the seat.
    public var muted: Bool
    /// The seated user's own microphone switch.
    public var micOn: Bool
    /// The SSRC the seated user's audio arrives with (set by the server's media plane).
    public var ssrc: UInt32?

    public init(index: Int, state: SeatState = .empty, user: String? = nil, muted: Bool = false, micOn: Bool = false, ssrc: UInt32? = nil) {
        self.index = index
        self.state = state
        self.user = user
        self.muted = muted
        self.micOn = micOn
        self.ssrc = ssrc
    }
}
