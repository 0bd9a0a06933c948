import Foundation

/// A file a pending message carries (an image, a voice note, a video or its thumbnail), and how
/// far its upload has gone. Kept with the message in the device's store: an app killed
/// mid-upload asks the server where the upload stands when it starts again and sends the rest.
public struct PendingUpload: Sendable, Equatable, Codable {
    /// Where the message's payload names the upload: `media` or `thumbnail`.
    public var field: String
    /// The file on the device; the app keeps it until the message is sent.
    public var file: String
    /// Its MIME type (`image/jpeg`, `audio/ogg`, ...).
    public var type: String
    /// Its size in bytes.
    public var length: Int64
    /// The server's upload, once made.
    public var upload: String?
    /// The bytes the server holds: the progress is `offset` of `length`.
    public var offset: Int64 = 0

    public init(field: String, file: String, type: String, length: Int64) {
        self.field = field
        self.file = file
        self.type = type
        self.length = length
    }

    public var isFinished: Bool { upload != nil && offset == length }
}
