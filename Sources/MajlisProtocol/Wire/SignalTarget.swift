/// Who receives a custom signal.
public enum SignalTarget: Sendable, Equatable {
    /// Every other member of the room.
    case room
    /// These users (those not in the room are skipped).
    case users([String])
}
