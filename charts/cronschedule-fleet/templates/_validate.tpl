{{/*
The checks of the fleet's values, in order: prefix, count, schedules,
concurrencyPolicy, the options (within the CRD's bounds; timeZone an IANA name
of files/time-zones.txt or a UTC offset), the generated names. The first that
fails ends the render with "<value>: <reason>" (helm `fail`), so nothing is
rendered. `cronctl fleet preview` makes the same checks with the same messages
(operator/cronctl/fleet.py); tests/charts/test_fleet_chart.py holds the two to
each other and to the scheduling core.
*/}}

{{/* The largest whole number a helm value (a float64) holds exactly: the bound of
the options the CRD stores as int64. */}}
{{- define "fleet.maxExact" -}}9007199254740991{{- end -}}
{{- define "fleet.maxInt32" -}}2147483647{{- end -}}

{{/* Python's str.split() whitespace, as the core splits expressions. */}}
{{- define "fleet.whitespace" -}}[\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+{{- end -}}

{{/* fleet.words: the words of a text, as a JSON list (str.split()). */}}
{{- define "fleet.words" -}}
{{- $words := list -}}
{{- range regexSplit (include "fleet.whitespace" .) . -1 -}}
{{- if . -}}{{- $words = append $words . -}}{{- end -}}
{{- end -}}
{{- toJson $words -}}
{{- end -}}

{{/* fleet.checkWhole: fail unless .v is a whole number from .lo to .hi (a null passes when .null). */}}
{{- define "fleet.checkWhole" -}}
{{- $v := .v -}}
{{- if not (and .null (kindIs "invalid" $v)) -}}
{{- $range := printf "%s-%s" (toString .lo) (toString .hi) -}}
{{- $number := or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v) -}}
{{- if or (not $number) (and $number (ne (floor $v) (float64 $v))) -}}
{{- fail (printf "%s: %s is not a whole number (%s)" .name (toJson $v) $range) -}}
{{- end -}}
{{- if or (lt (float64 $v) (float64 .lo)) (gt (float64 $v) (float64 .hi)) -}}
{{- fail (printf "%s: %s is out of range %s" .name (toJson $v) $range) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* fleet.value: one value of a cron field: "=<number>" or the reason it is refused
(core/cron.py _value). Input: dict text label low high names. */}}
{{- define "fleet.value" -}}
{{- $text := .text -}}
{{- if regexMatch "^[0-9]+$" $text -}}
{{- $digits := regexReplaceAll "^0+" $text "" | default "0" -}}
{{- if and (le (len $digits) 2) (ge (atoi $digits) .low) (le (atoi $digits) .high) -}}
={{ atoi $digits }}
{{- else -}}
{{ $text }} is out of range {{ .low }}-{{ .high }}
{{- end -}}
{{- else if and .names (regexMatch "^[A-Za-z]+$" $text) (hasKey .names (upper $text)) -}}
={{ get .names (upper $text) }}
{{- else if eq $text "" -}}
a value is missing
{{- else -}}
'{{ $text }}' is not a number{{ if .names }} or a name{{ end }}
{{- end -}}
{{- end -}}

{{/* fleet.field: the reason one cron field is refused, or nothing (core/cron.py _item).
Input: dict text label low high star names. */}}
{{- define "fleet.field" -}}
{{- $f := . -}}
{{- $error := "" -}}
{{- range $item := splitList "," $f.text -}}
{{- if not $error -}}
{{- if eq $item "" -}}
{{- $error = "empty item in list" -}}
{{- else -}}
{{- $parts := splitn "/" 2 $item -}}
{{- $base := $parts._0 -}}
{{- $slash := contains "/" $item -}}
{{- if eq $base "*" -}}
{{- else if contains "-" $base -}}
{{- $ends := splitn "-" 2 $base -}}
{{- $low := include "fleet.value" (merge (dict "text" $ends._0) $f) -}}
{{- $high := include "fleet.value" (merge (dict "text" $ends._1) $f) -}}
{{- if not (hasPrefix "=" $low) -}}
{{- $error = $low -}}
{{- else if not (hasPrefix "=" $high) -}}
{{- $error = $high -}}
{{- else if gt (atoi (trimPrefix "=" $low)) (atoi (trimPrefix "=" $high)) -}}
{{- $error = printf "range %s runs backwards" $base -}}
{{- end -}}
{{- else -}}
{{- $single := include "fleet.value" (merge (dict "text" $base) $f) -}}
{{- if not (hasPrefix "=" $single) -}}
{{- $error = $single -}}
{{- else if $slash -}}
{{- $error = printf "%s: a step may follow only * or a range" $item -}}
{{- end -}}
{{- end -}}
{{- if and (not $error) $slash -}}
{{- $step := $parts._1 -}}
{{- if not (regexMatch "^[0-9]+$" $step) -}}
{{- $error = printf "step '%s' is not a number" $step -}}
{{- else if regexMatch "^0+$" $step -}}
{{- $error = "step must be >= 1" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $error -}}{{ $f.label }}: {{ $error }}{{- end -}}
{{- end -}}

{{/* fleet.expressionError: the reason an expression is not a fleet's, a cron
expression or @every (core/schedule.py parse_seed_expression), or nothing. */}}
{{- define "fleet.expressionError" -}}
{{- if not (kindIs "string" .) -}}
expression: must be a string
{{- else -}}
{{- $words := include "fleet.words" . | fromJsonArray -}}
{{- $first := "" -}}
{{- if $words -}}{{- $first = index $words 0 -}}{{- end -}}
{{- if hasPrefix "@" $first -}}
{{- if or (ne (len $words) 2) (ne $first "@every") -}}
expression: the only @ form is '@every <N>m' or '@every <N>h'
{{- else -}}
{{- $spec := index $words 1 -}}
{{- if not (regexMatch "^.*[mh]$" $spec) -}}
interval: unit of '{{ $spec }}' must be m (minutes) or h (hours)
{{- else -}}
{{- $amount := regexReplaceAll "[mh]$" $spec "" -}}
{{- if not (regexMatch "^[1-9][0-9]*$" $amount) -}}
interval: '{{ $amount }}' is not a positive whole number without leading zeros
{{- else if or (gt (len $amount) 7) (gt (mul (atoi $amount) (ternary 60 1 (hasSuffix "h" $spec))) 525600) -}}
interval: {{ $spec }} is longer than 525600 minutes
{{- end -}}
{{- end -}}
{{- end -}}
{{- else if hasPrefix "every" (lower $first) -}}
expression: every(N).unit rules are not taken here: give a cron expression or '@every <N>m|h'
{{- else if ne (len $words) 5 -}}
expression: has {{ len $words }} fields, a cron expression has 5 (minute hour day-of-month month day-of-week)
{{- else -}}
{{- $months := dict "JAN" 1 "FEB" 2 "MAR" 3 "APR" 4 "MAY" 5 "JUN" 6 "JUL" 7 "AUG" 8 "SEP" 9 "OCT" 10 "NOV" 11 "DEC" 12 -}}
{{- $weekdays := dict "SUN" 0 "MON" 1 "TUE" 2 "WED" 3 "THU" 4 "FRI" 5 "SAT" 6 -}}
{{- $fields := list
  (dict "label" "minute" "low" 0 "high" 59 "names" dict)
  (dict "label" "hour" "low" 0 "high" 23 "names" dict)
  (dict "label" "day-of-month" "low" 1 "high" 31 "names" dict)
  (dict "label" "month" "low" 1 "high" 12 "names" $months)
  (dict "label" "day-of-week" "low" 0 "high" 7 "names" $weekdays) -}}
{{- $error := "" -}}
{{- range $i, $field := $fields -}}
{{- if not $error -}}
{{- $error = include "fleet.field" (merge (dict "text" (index $words $i)) $field) -}}
{{- end -}}
{{- end -}}
{{- $error -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* fleet.zoneError: the reason a timeZone is neither a zone of the tz database nor a
UTC offset (core/zones.py parse_zone), or nothing. Input: dict zone names (the lines
of files/time-zones.txt). */}}
{{- define "fleet.zoneError" -}}
{{- $zone := .zone -}}
{{- if not (kindIs "string" $zone) -}}
must be an offset like +05:30 or a zone name like Europe/Berlin
{{- else if or (hasPrefix "+" $zone) (hasPrefix "-" $zone) -}}
{{- if not (regexMatch "^[+-]..:..$" $zone) -}}
{{ toJson $zone }} is not an offset of the form +HH:MM or -HH:MM
{{- else if not (regexMatch "^.[0-9][0-9]:" $zone) -}}
{{ toJson $zone }}: hours must be two digits
{{- else if not (regexMatch "^.[0-9][0-9]:(00|15|30|45)$" $zone) -}}
{{ toJson $zone }}: minutes must be 00, 15, 30 or 45
{{- else if gt (add (mul (atoi (substr 1 3 $zone)) 60) (atoi (substr 4 6 $zone))) 840 -}}
{{ toJson $zone }} is beyond the largest offset, 14:00
{{- end -}}
{{- else if or (hasPrefix "#" $zone) (not (has $zone .names)) -}}
{{ toJson $zone }} is not a time zone: give an IANA name such as Europe/Berlin or a UTC offset such as +05:30
{{- end -}}
{{- end -}}

{{/* fleet.validate: every check, in order; fails the render at the first that fails. */}}
{{- define "fleet.validate" -}}
{{- $v := .Values -}}
{{- $nameRule := "must be 1-40 lower-case letters and digits in groups joined by single hyphens" -}}
{{- /* 1. prefix: a job name of the harness */ -}}
{{- $prefix := $v.prefix -}}
{{- if or (not (kindIs "string" $prefix)) (gt (len (toString $prefix)) 40) (not (regexMatch "^[a-z0-9]+(-[a-z0-9]+)*$" (toString $prefix))) -}}
{{- fail (printf "prefix: %s %s" (toJson $prefix) $nameRule) -}}
{{- end -}}
{{- /* 2. count */ -}}
{{- include "fleet.checkWhole" (dict "name" "count" "v" $v.count "lo" 1 "hi" 5000) -}}
{{- $count := int64 $v.count -}}
{{- /* 3. schedules: a non-empty list of valid expressions (all of them, used or not) */ -}}
{{- $schedules := $v.schedules -}}
{{- if or (not (kindIs "slice" $schedules)) (not $schedules) -}}
{{- fail (printf "schedules: %s must be a non-empty list of expressions" (toJson $schedules)) -}}
{{- end -}}
{{- range $i, $s := $schedules -}}
{{- $error := include "fleet.expressionError" $s -}}
{{- if $error -}}
{{- fail (printf "schedules[%d]: %s" $i $error) -}}
{{- end -}}
{{- end -}}
{{- /* 4. concurrencyPolicy */ -}}
{{- $policy := $v.concurrencyPolicy -}}
{{- if not (has $policy (list "Allow" "Forbid" "Replace")) -}}
{{- fail (printf "concurrencyPolicy: %s is not one of Allow, Forbid, Replace" (toJson $policy)) -}}
{{- end -}}
{{- /* 5. the options: no other values, then each option, within the CRD's bounds */ -}}
{{- $known := list "prefix" "count" "schedules" "concurrencyPolicy" "timeZone" "startingDeadlineSeconds" "timeoutMinutes" "successfulJobsHistoryLimit" "failedJobsHistoryLimit" "maxRetries" "retryDelayMinutes" "catchUp" "jitterSeconds" "suspend" "labels" "jobTemplate" "global" -}}
{{- range $key := keys $v | sortAlpha -}}
{{- if not (has $key $known) -}}
{{- fail (printf "%s: is not a value of this chart (known: %s)" $key (without $known "global" | join ", ")) -}}
{{- end -}}
{{- end -}}
{{- $max := include "fleet.maxExact" . | int64 -}}
{{- $max32 := include "fleet.maxInt32" . | int64 -}}
{{- include "fleet.checkWhole" (dict "name" "startingDeadlineSeconds" "v" $v.startingDeadlineSeconds "lo" 60 "hi" $max "null" true) -}}
{{- include "fleet.checkWhole" (dict "name" "timeoutMinutes" "v" $v.timeoutMinutes "lo" 1 "hi" $max "null" true) -}}
{{- include "fleet.checkWhole" (dict "name" "successfulJobsHistoryLimit" "v" $v.successfulJobsHistoryLimit "lo" 0 "hi" $max32 "null" true) -}}
{{- include "fleet.checkWhole" (dict "name" "failedJobsHistoryLimit" "v" $v.failedJobsHistoryLimit "lo" 0 "hi" $max32 "null" true) -}}
{{- $used := $schedules -}}
{{- if lt $count (len $schedules | int64) -}}{{- $used = slice $schedules 0 (int $count) -}}{{- end -}}
{{- if not (kindIs "invalid" $v.timeZone) -}}
{{- $everyReason := "an @every interval counts real time and takes no time zone" -}}
{{- if hasPrefix "@" (index (include "fleet.words" (index $used 0) | fromJsonArray) 0) -}}
{{- fail (printf "timeZone: %s (schedules[0] is %s)" $everyReason (toJson (index $used 0))) -}}
{{- end -}}
{{- $names := splitList "\n" ($.Files.Get "files/time-zones.txt" | trim) -}}
{{- if lt (len $names) 100 -}}
{{- fail "files/time-zones.txt is missing from the chart: run scripts/sync-chart-crd.py" -}}
{{- end -}}
{{- $error := include "fleet.zoneError" (dict "zone" $v.timeZone "names" $names) -}}
{{- if $error -}}
{{- fail (printf "timeZone: %s" $error) -}}
{{- end -}}
{{- range $i, $s := $used -}}
{{- if hasPrefix "@" (index (include "fleet.words" $s | fromJsonArray) 0) -}}
{{- fail (printf "timeZone: %s (schedules[%d] is %s)" $everyReason $i (toJson $s)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- include "fleet.checkWhole" (dict "name" "maxRetries" "v" $v.maxRetries "lo" 0 "hi" 100 "null" true) -}}
{{- include "fleet.checkWhole" (dict "name" "retryDelayMinutes" "v" $v.retryDelayMinutes "lo" 0 "hi" $max32 "null" true) -}}
{{- if not (or (kindIs "invalid" $v.catchUp) (has $v.catchUp (list "Latest" "All"))) -}}
{{- fail (printf "catchUp: %s is not one of Latest, All" (toJson $v.catchUp)) -}}
{{- end -}}
{{- include "fleet.checkWhole" (dict "name" "jitterSeconds" "v" $v.jitterSeconds "lo" 0 "hi" 3600 "null" true) -}}
{{- if not (or (kindIs "invalid" $v.suspend) (kindIs "bool" $v.suspend)) -}}
{{- fail (printf "suspend: %s must be true or false" (toJson $v.suspend)) -}}
{{- end -}}
{{- $reserved := include "fleet.labels" . | fromYaml | keys -}}
{{- if not (or (kindIs "invalid" $v.labels) (kindIs "map" $v.labels)) -}}
{{- fail (printf "labels: %s must be a map of label names to values" (toJson $v.labels)) -}}
{{- end -}}
{{- range $key, $value := $v.labels -}}
{{- if has $key $reserved -}}
{{- fail (printf "labels: %s is set by the chart" $key) -}}
{{- end -}}
{{- $name := regexReplaceAll "^.*/" $key "" -}}
{{- $keyPrefix := ternary (regexReplaceAll "/[^/]*$" $key "") "" (contains "/" $key) -}}
{{- if or (gt (len $name) 63) (not (regexMatch "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$" $name)) (gt (len $keyPrefix) 253) (and (contains "/" $key) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" $keyPrefix))) -}}
{{- fail (printf "labels: %s is not a valid label name" (toJson $key)) -}}
{{- end -}}
{{- if or (not (kindIs "string" $value)) (gt (len (toString $value)) 63) (not (regexMatch "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" (toString $value))) -}}
{{- fail (printf "labels: the value of %s, %s, is not a valid label value" $key (toJson $value)) -}}
{{- end -}}
{{- end -}}
{{- $template := $v.jobTemplate -}}
{{- $templateOk := false -}}
{{- if kindIs "map" $template -}}
{{- $jobSpec := index $template "spec" -}}
{{- if kindIs "map" $jobSpec -}}
{{- $templateOk = kindIs "map" (index $jobSpec "template") -}}
{{- end -}}
{{- end -}}
{{- if not $templateOk -}}
{{- fail "jobTemplate: must be a JobTemplateSpec with spec.template (a batch/v1 Job's pod template)" -}}
{{- end -}}
{{- /* 6. the generated names: the longest, <prefix>-<count-1>, must be a harness job name
     (then every name is) and, by the same token, a Kubernetes object name the CRD takes */ -}}
{{- $last := printf "%s-%d" $prefix (sub $count 1) -}}
{{- if gt (len $last) 40 -}}
{{- fail (printf "prefix: %s with count %d makes names up to %s (%d characters); names %s" (toJson $prefix) $count (toJson $last) (len $last) $nameRule) -}}
{{- end -}}
{{- if or (gt (len $last) 52) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $last)) -}}
{{- fail (printf "prefix: %s with count %d makes %s, not a Kubernetes object name the CRD takes (an RFC 1123 label of at most 52 characters)" (toJson $prefix) $count (toJson $last)) -}}
{{- end -}}
{{- end -}}
