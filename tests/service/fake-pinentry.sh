#!/bin/sh
# A pinentry for tests: speaks pinentry's Assuan protocol on its standard
# input and output, appends every command it gets to $PINENTRY_LOG, and
# answers the Nth GETPIN with line N of $PINENTRY_ANSWERS:
#   pin TEXT   the PIN (sent as given: escape % as %25 yourself)
#   cancel     the user cancelled (ERR 83886179, GPG_ERR_CANCELED)
#   die        the program ends without answering
# A GETPIN waits first while $PINENTRY_HOLD names a file that does not
# exist yet (the test creates it to let the answer go), at most 60 s.
log=${PINENTRY_LOG:-/dev/null}
echo "OK Pleased to meet you"
n=0
while IFS= read -r line; do
	printf '%s\n' "$line" >>"$log"
	case $line in
	GETPIN*)
		n=$((n + 1))
		if [ -n "${PINENTRY_HOLD:-}" ]; then
			i=0
			while [ ! -e "$PINENTRY_HOLD" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
		fi
		answer=$(sed -n "${n}p" "${PINENTRY_ANSWERS:-/dev/null}")
		case $answer in
		"pin "*) printf 'D %s\nOK\n' "${answer#pin }" ;;
		die) exit 1 ;;
		*) echo "ERR 83886179 Operation cancelled <Pinentry>" ;;
		esac
		;;
	BYE*) echo OK; exit 0 ;;
	*) echo OK ;;
	esac
done
