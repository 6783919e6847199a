{{/* fleet.labels: the labels the chart sets on every object it renders (the recommended
app.kubernetes.io ones, helm.sh/chart, and the fleet's own); values.labels may not set them. */}}
{{- define "fleet.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cronctl
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
cronctl.dev/fleet: {{ .Values.prefix | toString | quote }}
{{- end -}}
