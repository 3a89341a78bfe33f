{{/* Labels common to the objects this chart writes by hand. */}}
{{- define "platform-operator.labels" -}}
app.kubernetes.io/name: platform-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- with .Values.extraLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The webhooks' namespaceSelector: the served namespaces with watchNamespaces,
so the API server never calls the webhooks about objects elsewhere; every
namespace otherwise.
*/}}
{{- define "platform-operator.namespaceSelector" -}}
{{- if .Values.watchNamespaces -}}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: In
  values:
  {{- toYaml .Values.watchNamespaces | nindent 2 }}
{{- else -}}
{}
{{- end }}
{{- end }}
