/// The state of one seat.
public enum SeatState: String, Sendable, Codable {
    case empty
    case occupied
    case locked
}
