import MajlisProtocol
import Testing

@testable import MajlisServer

/// The pre-call tests' caps as a value, on a clock the test moves (milliseconds).
@Suite struct PrecallBudgetTests {
    var budget = PrecallBudget()
    var now: Int64 = 1_000_000

    @Test mutating func anAddressRunsFourEchoTestsAndTheServerThirtyTwo() {
        for index in 0..<4 { let answer1 = budget.admit("a\(index)", kind: .echo, user: "u\(index)", address: "10.0.0.1", now: now); #expect(answer1 == nil) }
        let answer2 = budget.admit("a4", kind: .echo, user: "u4", address: "10.0.0.1", now: now)
        #expect(answer2?.code == .rateLimited)
        // Started again on the same connection, a test replaces itself: not counted twice.
        let answer3 = budget.admit("a3", kind: .echo, user: "u3", address: "10.0.0.1", now: now)
        #expect(answer3 == nil)
        budget.end("a0")
        let answer4 = budget.admit("a4", kind: .echo, user: "u4", address: "10.0.0.1", now: now)
        #expect(answer4 == nil)
        for index in 4..<32 { let answer5 = budget.admit("b\(index)", kind: .echo, user: "v\(index)", address: "10.0.1.\(index)", now: now); #expect(answer5 == nil) }
        let full = budget.admit("c", kind: .echo, user: "w", address: "10.0.2.1", now: now)
        #expect(full?.code == .rateLimited && full?.message.contains("32") == true, "\(String(describing: full))")
        #expect(budget.count(.echo) == 32)
        // A minute on, every test has run out.
        now += 60_000
        let answer6 = budget.admit("c", kind: .echo, user: "w", address: "10.0.2.1", now: now)
        #expect(answer6 == nil)
        #expect(budget.count(.echo) == 1)
    }

    @Test mutating func probesHaveACoolDownACapPerAddressAndAShareOfTheBandwidth() {
        let answer7 = budget.admit("p1", kind: .probe, user: "huda", address: "10.0.0.1", bitrate: 500_000, now: now)
        #expect(answer7 == nil)
        budget.end("p1")
        let soon = budget.admit("p1", kind: .probe, user: "huda", address: "10.0.0.1", bitrate: 500_000, now: now + 4_000)
        #expect(soon?.code == .rateLimited && soon?.message.contains("try again in 1 s") == true, "\(String(describing: soon))")
        let answer8 = budget.admit("p1", kind: .probe, user: "huda", address: "10.0.0.1", bitrate: 500_000, now: now + 5_000)
        #expect(answer8 == nil)
        now += 5_000
        let answer9 = budget.admit("p2", kind: .probe, user: "omar", address: "10.0.0.1", bitrate: 500_000, now: now)
        #expect(answer9 == nil)
        let answer10 = budget.admit("p3", kind: .probe, user: "layla", address: "10.0.0.1", bitrate: 500_000, now: now)
        #expect(answer10?.code == .rateLimited)
        // The server's 20 Mb/s: two probes at the top rate fill it; one at the default still fits
        // beside a top-rate one, whatever the address.
        budget.end("p1")
        budget.end("p2")
        let answer11 = budget.admit("q1", kind: .probe, user: "a", address: "10.0.1.1", bitrate: 10_000_000, now: now)
        #expect(answer11 == nil)
        let answer12 = budget.admit("q2", kind: .probe, user: "b", address: "10.0.1.2", bitrate: 9_500_000, now: now)
        #expect(answer12 == nil)
        let busy = budget.admit("q3", kind: .probe, user: "c", address: "10.0.1.3", bitrate: 600_000, now: now)
        #expect(busy?.code == .rateLimited && busy?.message.contains("bandwidth") == true, "\(String(describing: busy))")
        let answer13 = budget.admit("q3", kind: .probe, user: "c", address: "10.0.1.3", bitrate: 500_000, now: now)
        #expect(answer13 == nil)
        // A refused start keeps the test it would have replaced.
        let answer14 = budget.admit("q1", kind: .probe, user: "a", address: "10.0.1.1", bitrate: 10_000_000, now: now + 1)
        #expect(answer14?.code == .rateLimited)
        #expect(budget.count(.probe) == 3)
        // A refused start does not set the cool-down going.
        let answer15 = budget.admit("q4", kind: .probe, user: "d", address: "10.0.1.4", bitrate: 10_000_000, now: now)
        #expect(answer15?.code == .rateLimited)
        budget.end("q2")
        let answer16 = budget.admit("q4", kind: .probe, user: "d", address: "10.0.1.4", bitrate: 9_000_000, now: now)
        #expect(answer16 == nil)
    }
}
