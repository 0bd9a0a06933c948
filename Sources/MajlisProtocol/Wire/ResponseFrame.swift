import Foundation

/// A response as it travels: `{"re": 7, "ok": true, "data": {...}}` or
/// `{"re": 7, "ok": false, "error": {"code": ..., "message": ...}}`.
public struct ResponseFrame<Payload: Encodable & Sendable>: Encodable, Sendable {
    public var re: Int64?
    public var data: Payload?
    public var error: ProtocolError?

    private enum CodingKeys: String, CodingKey { case re, ok, data, error }

    /// A successful response.
    public init(re: Int64, data: Payload) {
        self.re = re
        self.data = data
        self.error = nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let re { try c.encode(re, forKey: .re) } else { try c.encodeNil(forKey: .re) }
        try c.encode(error == nil, forKey: .ok)
        if let error { try c.encode(error, forKey: .error) } else { try c.encode(data, forKey: .data) }
    }
}

extension ResponseFrame where Payload == EmptyData {
    /// A failed response.
    public init(re: Int64?, error: ProtocolError) {
        self.re = re
        self.data = nil
        self.error = error
    }
}

/// The data of a response that carries nothing: `{}`.
public struct EmptyData: Codable, Sendable, Equatable {
    public init() {}
}
