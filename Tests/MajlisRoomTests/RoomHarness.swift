import MajlisProtocol
import MajlisRoom
import Testing

/// A room engine with a hand-moved clock and shortcuts for tests.
struct RoomHarness {
    var engine: RoomEngine
    var now: Int64 = 1_000_000
    var grants: [String: Grants] = [:]
    /// Users who act as the server API (operators, not members).
    var operators: Set<String> = []

    init(mode: RoomMode = .free, seats: Int = 8, owner: String = "owner", limits: RoomLimits = RoomLimits()) {
        engine = RoomEngine(
            id: "r1", settings: RoomSettings(title: "Room", seatCount: seats, mode: mode), owner: owner, now: now,
            limits: limits)
        _ = join(owner)
    }

    func caller(_ user: String) -> Caller {
        Caller(id: user, name: "name-\(user)", grants: grants[user] ?? Grants(), isOperator: operators.contains(user))
    }

    @discardableResult
    mutating func run(_ user: String, _ command: RoomCommand) -> RoomOutcome {
        let outcome = engine.handle(command, from: caller(user), now: now)
        #expect(engine.invariantViolations() == [])
        return outcome
    }

    @discardableResult
    mutating func join(_ user: String) -> RoomOutcome { run(user, .join(create: nil)) }

    /// Runs a command that must succeed; returns its outcome.
    @discardableResult
    mutating func ok(_ user: String, _ command: RoomCommand, sourceLocation: SourceLocation = #_sourceLocation) -> RoomOutcome {
        let outcome = run(user, command)
        if case .failure(let error) = outcome.reply {
            Issue.record("\(command) by \(user) failed: \(error)", sourceLocation: sourceLocation)
        }
        return outcome
    }

    /// Runs a command that must fail with `code`, and checks that it changed nothing.
    mutating func fails(_ user: String, _ command: RoomCommand, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = engine.snapshot(for: "owner", now: now)
        let outcome = run(user, command)
        switch outcome.reply {
        case .success:
            Issue.record("\(command) by \(user) succeeded; expected \(code.rawValue)", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.code == code, "\(command) by \(user): \(error)", sourceLocation: sourceLocation)
        }
        #expect(outcome.deliveries.isEmpty, sourceLocation: sourceLocation)
        #expect(outcome.effects.isEmpty, sourceLocation: sourceLocation)
        #expect(engine.snapshot(for: "owner", now: now) == before, sourceLocation: sourceLocation)
    }

    func seat(_ index: Int) -> Seat { engine.seats[index] }
}

extension RoomOutcome {
    /// Names of the events, in order.
    var eventNames: [String] { deliveries.map(\.event.name) }

    func events(to audience: Audience) -> [ServerEvent] {
        deliveries.filter { $0.audience == audience }.map(\.event)
    }
}
