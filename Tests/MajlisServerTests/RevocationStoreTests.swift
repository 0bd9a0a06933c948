import Foundation
import MajlisServer
import MajlisTestSupport
import Testing

/// Revoked sessions in the store, on SQLite and PostgreSQL alike, and which tokens they refuse.
@Suite struct RevocationStoreTests {
    @Test(arguments: StoreBackend.allCases) func aLaterRevocationReplacesTheEarlier(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        #expect(try store.revocation(of: "huda") == nil)
        try store.revokeSessions(of: "huda", reason: "password changed", now: 1_000_500)
        try store.revokeSessions(of: "huda", reason: "account closed", now: 2_000_500)
        #expect(try store.revocation(of: "huda") == Store.Revocation(at: 2_000_500, reason: "account closed"))
        #expect(try store.revocation(of: "omar") == nil)
    }

    /// Tokens issued before the revocation, or in its second, are refused (a token that does not
    /// say when it was issued too); those of the next second on are taken.
    @Test func tokensIssuedUpToTheRevocationsSecondAreRefused() {
        let revocation = Store.Revocation(at: 2_000_500, reason: "x")
        #expect(revocation.refuses(issuedAt: 1_999) && revocation.refuses(issuedAt: 2_000) && revocation.refuses(issuedAt: Int64?.none))
        #expect(!revocation.refuses(issuedAt: 2_001))
    }
}
