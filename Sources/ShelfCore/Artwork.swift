import Foundation

/// A decoded picture: tightly packed RGBA rows, 8 bits per channel.
public struct DecodedImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int
    /// `bytesPerRow × height` bytes, row after row, R G B A.
    public let pixels: [UInt8]

    /// An image over existing pixels (`pixels.count` must be `bytesPerRow × height`).
    public init(width: Int, height: Int, bytesPerRow: Int, pixels: [UInt8]) {
        precondition(pixels.count == bytesPerRow * height, "pixel buffer does not match the dimensions")
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
    }

    /// What the image costs in a cache: its pixel bytes.
    public var cost: Int { bytesPerRow * height }
}

/// One track's picture, as a list row asks for it: the track, and the artwork it showed when the
/// request was made (a request for a picture the track no longer shows is stale).
public struct ArtworkRequest: Sendable, Hashable {
    public let trackID: TrackID
    public let artworkID: ArtworkID

    /// A request for `artworkID` as shown by `trackID`.
    public init(trackID: TrackID, artworkID: ArtworkID) {
        self.trackID = trackID
        self.artworkID = artworkID
    }
}
