import Foundation
import MajlisProtocol

/// What goes into the core and what comes out of it.
extension SignalingClientCore {
    /// A connection the host opens when the core says so; the core numbers them.
    public typealias Connection = Int
    /// A caller waiting for an outcome; the host numbers them.
    public typealias Ticket = Int

    /// What a caller gets.
    public enum Outcome: Sendable, Equatable {
        /// A request's answer.
        case data(JSONValue)
        /// `connect`'s session.
        case session(SessionInfo)
        /// Where `move(to:)` ended up connected.
        case moved(String)
        /// `disconnect` is done.
        case done
        case failure(MajlisError)
    }

    /// What the host carries out.
    public enum Action: Sendable, Equatable {
        /// Opens a WebSocket to `url`; its messages and its close come back as `received` and `closed`.
        case open(Connection, url: String)
        case send(Connection, Data)
        case close(Connection, code: UInt16, reason: String)
        case resolve(Ticket, Outcome)
        case emit(SignalingEvent)
        /// No event follows: the subscribers' streams end.
        case finish
        case log(LogLevel, String)
    }

    public enum Phase: Sendable, Equatable { case idle, connecting, open, reconnecting, closed }

    public struct CloseInfo: Sendable, Equatable {
        public var code: UInt16?
        public var reason: String
    }
}
