/// How seats are taken: freely, or by request and approval.
public enum RoomMode: String, Sendable, Codable, CaseIterable {
    /// Any member may take an empty seat.
    case free
    /// Members ask; the owner or an admin approves.
    case request
}
