import Foundation
import ShelfCore

/// A CUE sheet that splits an audio image, and where it came from.
struct CueSource: Sendable {
    let sheet: CueSheet
    /// The `.cue` file; nil for a sheet embedded in the image.
    let path: String?
    /// The name the sheet's FILE lines give the image (the image may have been renamed or
    /// converted since: `CDImage.wav` in a sheet beside `CDImage.flac`).
    let fileName: String
}

/// Audio images with CUE sheets: one track per sheet track, each a slice of the image. A sheet is
/// taken from beside the image (`NAME.cue` or `NAME.EXT.cue`, else any sheet of the folder whose
/// FILE names the image) or from the image's own `CUESHEET` tag.
enum CueImages {
    /// The formats rips are kept as images in.
    static let imageExtensions: Set<String> = ["flac", "wav", "wave", "ape", "wv"]

    /// The sheets of one folder, read once per folder.
    struct FolderSheets {
        var sheets: [(path: String, sheet: CueSheet)] = []
        var problems: [ImportReport.Failure] = []
    }

    /// Every `.cue` of a folder, parsed; unreadable ones are problems naming the file.
    static func sheets(in listing: FolderListing) -> FolderSheets {
        var found = FolderSheets()
        for name in listing.entries.values.sorted() where AudioScanner.pathExtension(name) == "cue" {
            let path = listing.directory.appendingPathComponent(name).path
            do {
                guard let data = FileContents.read(path) else {
                    found.problems.append(.init(path: path, error: "\(path): cannot read it"))
                    continue
                }
                let sheet = try CueSheet.parse(data, name: path)
                found.sheets.append((path, sheet))
                // A sheet naming a file that is not there (and that no image stands in for) is said.
                for file in sheet.files where listing.entry(file) == nil && imageStandingIn(for: file, sheet: path, in: listing) == nil {
                    found.problems.append(.init(path: path, error: "\(path): names the file '\(file)', which is not in its folder"))
                }
            } catch {
                found.problems.append(.init(path: path, error: "\(error)"))
            }
        }
        return found
    }

    /// The image beside `sheet` that stands in for a FILE name that is not there: same base name
    /// as the named file or as the sheet, with an image extension.
    static func imageStandingIn(for file: String, sheet: String, in listing: FolderListing) -> String? {
        let bases = [(file as NSString).deletingPathExtension, ((sheet as NSString).lastPathComponent as NSString).deletingPathExtension]
        for base in bases {
            for ext in ["flac", "wav", "ape", "wv"] {
                if let entry = listing.entry(base + "." + ext) { return entry }
            }
        }
        return nil
    }

    /// The sheet that splits `image`, if any.
    static func source(for image: URL, tags: AudioFileTags, in listing: FolderListing, sheets: FolderSheets) -> CueSource? {
        guard imageExtensions.contains(AudioScanner.pathExtension(image.path)) else { return nil }
        let name = image.lastPathComponent
        let base = (name as NSString).deletingPathExtension.lowercased()
        // A sheet naming the image, by name first.
        func names(_ sheet: CueSheet) -> String? { sheet.files.first { $0.lowercased() == name.lowercased() } }
        func named(_ path: String) -> Bool {
            let sheetBase = ((path as NSString).lastPathComponent as NSString).deletingPathExtension.lowercased()
            return sheetBase == base || sheetBase == name.lowercased()
        }
        let ordered = sheets.sheets.filter { named($0.path) } + sheets.sheets.filter { !named($0.path) }
        for (path, sheet) in ordered {
            if let file = names(sheet) { return CueSource(sheet: sheet, path: path, fileName: file) }
        }
        // A sheet whose one FILE is not there and which this image stands in for.
        for (path, sheet) in ordered where sheet.files.count == 1 {
            let file = sheet.files[0]
            if listing.entry(file) == nil, imageStandingIn(for: file, sheet: path, in: listing) == name {
                return CueSource(sheet: sheet, path: path, fileName: file)
            }
        }
        // The image's own sheet (a FLAC's CUESHEET tag).
        if let text = tags.properties["CUESHEET"], !text.isEmpty, let sheet = try? CueSheet.parse(Data(text.utf8), name: image.path + " (CUESHEET)") {
            return CueSource(sheet: sheet, path: nil, fileName: sheet.files.first { $0.lowercased() == name.lowercased() } ?? sheet.files[0])
        }
        return nil
    }

    /// The tracks a sheet cuts from `image` (its tags read into `whole`): the sheet's titles,
    /// performers, songwriters and ISRCs over the image's own, album fields from its header;
    /// none when the sheet puts fewer than two in this file.
    static func tracks(of whole: Track, source: CueSource, duration: Double?) -> [Track] {
        let sheet = source.sheet
        let slices = sheet.slices(fileDurations: duration.map { [source.fileName: $0] } ?? [:]).filter { $0.file == source.fileName }
        // A file a sheet holds one track of (a multi-FILE rip's per-track files) is a track of its
        // own: its own tags say more than the sheet.
        guard slices.count >= 2 else { return [] }
        let count = sheet.tracks.filter { $0.file == source.fileName }.count
        return slices.map { slice in
            var track = whole
            track.path = Track.cuePath(image: whole.path, number: slice.number)
            let cue = slice.track
            track.title = cue?.title ?? (slice.track == nil ? "Hidden track" : whole.title)
            let albumArtist = sheet.performer ?? whole.albumArtist
            track.artist = cue?.performer ?? sheet.performer ?? whole.artist
            track.albumArtist = albumArtist
            track.album = sheet.title ?? whole.album
            track.composer = cue?.songwriter ?? sheet.songwriter ?? whole.composer
            track.genre = sheet.genre ?? whole.genre
            if let date = sheet.date, let year = Int(date.prefix(4)) { track.year = year }
            track.trackNumber = slice.number
            track.trackCount = count
            track.discNumber = sheet.discNumber ?? whole.discNumber
            track.discCount = sheet.discCount ?? whole.discCount
            if let comment = sheet.comment { track.comment = comment }
            track.lyrics = nil
            track.sortTitle = nil
            // The image's lists speak for the whole image; the sheet's names stand alone.
            track.details.artists = []
            track.details.albumArtists = []
            track.details.composers = []
            if sheet.genre != nil { track.details.genres = [] }
            track.details.isrcs = cue?.isrc.map { [$0] } ?? []
            if let catalog = sheet.catalog { track.details.catalogNumbers = [catalog] }
            // An image's track gain is the whole image's; its album gain still holds.
            if var gain = track.details.replayGain {
                gain.trackGain = nil
                gain.trackPeak = nil
                track.details.replayGain = gain.albumGain == nil && gain.albumPeak == nil ? nil : gain
            }
            track.details.cue = CueSlice(sheet: source.path, number: slice.number, start: slice.start, end: slice.end)
            let end = slice.end ?? duration
            track.duration = end.map { max(0, $0 - slice.start) }
            track.audioHash = whole.audioHash.map { $0 + "#" + String(slice.number) }
            return track
        }
    }
}
