import Foundation

/// A field a batch edit can set or clear.
public enum EditableField: String, Sendable, Hashable, Codable, CaseIterable {
    case title, artist, album, albumArtist, composer, genre, comment, lyrics
    case sortTitle, sortArtist, sortAlbum, sortAlbumArtist, sortComposer
    case year, trackNumber, trackCount, discNumber, discCount
    case compilation
    /// Kept in the library only: files have no rating every format and player agrees on.
    case rating

    /// Whether the value is a whole number (the rest are text, and `compilation` a yes/no).
    public var isNumber: Bool { [.year, .trackNumber, .trackCount, .discNumber, .discCount, .rating].contains(self) }

    /// A text field's place in `Track` and its TagLib property key: the one table edits,
    /// file writes and exports all read (nil for numbers, compilation and rating).
    public var text: (keyPath: WritableKeyPath<Track, String?>, property: String)? {
        switch self {
        case .title: (\.title, "TITLE")
        case .artist: (\.artist, "ARTIST")
        case .album: (\.album, "ALBUM")
        case .albumArtist: (\.albumArtist, "ALBUMARTIST")
        case .composer: (\.composer, "COMPOSER")
        case .genre: (\.genre, "GENRE")
        case .comment: (\.comment, "COMMENT")
        case .lyrics: (\.lyrics, "LYRICS")
        case .sortTitle: (\.sortTitle, "TITLESORT")
        case .sortArtist: (\.sortArtist, "ARTISTSORT")
        case .sortAlbum: (\.sortAlbum, "ALBUMSORT")
        case .sortAlbumArtist: (\.sortAlbumArtist, "ALBUMARTISTSORT")
        case .sortComposer: (\.sortComposer, "COMPOSERSORT")
        case .year, .trackNumber, .trackCount, .discNumber, .discCount, .compilation, .rating: nil
        }
    }
}

/// What happens to a track's picture in a batch edit.
public enum PictureChange: Sendable, Hashable {
    case unchanged
    /// Set to these image bytes (JPEG or PNG), in the file and in the library.
    case set(Data)
    case remove
}

/// The changes of one batch edit, applied alike to every track in it.
public struct MetadataChanges: Sendable, Hashable {
    /// New values by field; nil clears the field.
    public var values: [EditableField: String?]
    public var picture: PictureChange

    /// Changes setting `values` (nil clears) and the picture.
    public init(_ values: [EditableField: String?] = [:], picture: PictureChange = .unchanged) {
        self.values = values
        self.picture = picture
    }

    /// Why the changes cannot apply (a number that is not one, a rating outside 0…100), or nil.
    public func problem() -> String? {
        for (field, value) in values {
            guard let value, !SortKey.isBlank(value) else { continue }
            if field.isNumber {
                guard let number = Int(value.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                    return "\(field.rawValue) must be a whole number ≥ 0, got '\(value)'"
                }
                if field == .rating && number > 100 { return "rating must be 0…100, got \(number)" }
            }
            if field == .compilation && Self.flag(value) == nil { return "compilation must be yes or no, got '\(value)'" }
        }
        return nil
    }

    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "yes", "true": true
        case "0", "no", "false": false
        default: nil
        }
    }

    /// The track with the changes applied (the picture is the caller's: it needs the store).
    public func applied(to track: Track) -> Track {
        var t = track
        for (field, raw) in values {
            let text = raw.flatMap { SortKey.isBlank($0) ? nil : $0 }
            let number = text.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if let place = field.text {
                t[keyPath: place.keyPath] = text
                continue
            }
            switch field {
            case .year: t.year = number
            case .trackNumber: t.trackNumber = number
            case .trackCount: t.trackCount = number
            case .discNumber: t.discNumber = number
            case .discCount: t.discCount = number
            case .compilation: t.compilation = text.flatMap(Self.flag) ?? false
            case .rating: t.rating = number ?? 0
            default: break
            }
        }
        return t
    }

    /// The file properties (TagLib's unified keys) that carry an edited track's values; nil
    /// removes one. Rating stays in the library.
    public func fileProperties(of t: Track) -> [String: String?] {
        var properties: [String: String?] = [:]
        func pair(_ number: Int?, _ total: Int?) -> String? {
            guard let number else { return nil }
            return total.map { "\(number)/\($0)" } ?? String(number)
        }
        for field in values.keys {
            if let place = field.text {
                properties[place.property] = t[keyPath: place.keyPath]
                continue
            }
            switch field {
            case .year: properties["DATE"] = t.year.map(String.init)
            case .trackNumber, .trackCount: properties["TRACKNUMBER"] = pair(t.trackNumber, t.trackCount)
            case .discNumber, .discCount: properties["DISCNUMBER"] = pair(t.discNumber, t.discCount)
            case .compilation: properties["COMPILATION"] = t.compilation ? "1" : nil
            default: break
            }
        }
        return properties
    }
}
