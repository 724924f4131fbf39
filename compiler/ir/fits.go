package ir

// Fits reports whether every value of a source column of type src can be
// written into a column declared dst without loss: no digit rounded away,
// no integer overflowed, no time zone dropped. Widening is fine. When it
// does not fit, why says what would be lost.
//
// Two conventions mark what the engine did not say: a decimal with
// Precision 0 is unbounded (PostgreSQL's numeric without a precision), and
// a varchar with Length 0 has an unknown length (engines that keep none),
// which is not held against it: an engine that enforces a length fails
// the write loudly, one that does not keeps the whole value.
func Fits(src, dst Type) (ok bool, why string) {
	switch dst.Kind {
	case Text, JSON:
		if dst.Kind == JSON && src.Kind != JSON && src.Kind != Text && src.Kind != Varchar {
			return false, "json holds documents"
		}
		return true, ""
	case Varchar:
		switch {
		case src.Kind == Text:
			return false, "text is unbounded"
		case src.Kind == Varchar && src.Length > dst.Length:
			return false, "longer strings would be cut or refused"
		}
		return true, ""
	case Boolean:
		return src.Kind == Boolean, "only a boolean is a boolean"
	case Smallint, Integer, Bigint:
		switch {
		case src.IsInteger():
			return intDigits(src.Kind) <= intDigits(dst.Kind), "larger integers would overflow"
		case src.Kind == Decimal && src.Precision > 0 && src.Scale == 0:
			return src.Precision <= intDigits(dst.Kind)-1, "larger numbers would overflow"
		case src.Kind == Decimal || src.Kind == Double:
			return false, "digits after the point would be rounded away"
		}
	case Decimal:
		switch {
		case src.IsInteger():
			return intDigits(src.Kind) <= dst.Precision-dst.Scale, "larger integers would overflow"
		case src.Kind == Decimal && src.Precision == 0:
			return false, "an unbounded decimal can hold more digits"
		case src.Kind == Decimal && src.Scale > dst.Scale:
			return false, "digits after the point would be rounded away"
		case src.Kind == Decimal:
			return src.Precision-src.Scale <= dst.Precision-dst.Scale, "larger numbers would overflow"
		case src.Kind == Double:
			return false, "a double is not exact"
		}
	case Double:
		switch {
		case src.Kind == Double, src.Kind == Smallint, src.Kind == Integer:
			return true, ""
		case src.Kind == Bigint:
			return false, "integers above 2^53 would be rounded"
		case src.Kind == Decimal:
			return src.Precision > 0 && src.Precision <= 15, "a double keeps 15 significant digits"
		}
	case Date:
		return src.Kind == Date, "the time of day would be dropped"
	case Timestamp:
		switch src.Kind {
		case Date, Timestamp:
			return true, ""
		case TimestampTZ:
			return false, "the time zone would be dropped"
		}
	case TimestampTZ:
		return src.IsTime(), "not a point in time"
	}
	return false, "the types differ"
}

// intDigits is how many decimal digits an integer type's largest value
// has: the precision a decimal needs to hold every value.
func intDigits(k TypeKind) int {
	switch k {
	case Smallint:
		return 5
	case Integer:
		return 10
	}
	return 19
}
